// docker-compose.yml in real containers: the images of deploy/images/build.sh, Debian's
// docker-compose 1.29 with deploy/compose.host.yml (host networking on loopback, ports apart from
// the machine's own PostgreSQL and Redis), the optional profiles local-chain, replica and
// host-monitoring (Prometheus on loopback). The suite
// brings the topology up, proves the traffic reaches the containers, runs black-box checks
// through nginx and Prometheus's view of every service, then faults with honest traffic running
// (SIGKILL, docker stop, rolling restarts), and tears everything down.
// Without a Docker daemon and the built images the suite says SKIPPED and why (CI runs it: .ci/run).
import { basename } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import {
  ComposeProject,
  commandLine,
  containerPids,
  containerState,
  docker,
  dockerService,
  HOST_PORTS,
  type HostService,
  hostSockets,
  MACHINE_PORTS,
  portOf,
  SCRAPED,
} from "../test/containers.ts";
import { eventually } from "../test/eventually.ts";
import { deliveryOf, graphqlLoop, socketClients } from "../test/honest-traffic.ts";
import { connectClient } from "../test/realtime.ts";
import { describeWith } from "../test/services.ts";

const project = new ComposeProject("bet-results-compose-test", { CURSOR_SECRET: "compose-test-cursor-secret-0123456789" });
const PROXY = `http://127.0.0.1:${HOST_PORTS["proxy-host"]}`;
const LONG_RUNNING = Object.keys(HOST_PORTS) as HostService[];
const wallets = DEV_PLAYER_KEYS.map((key) => privateKeyToAccount(key).address.toLowerCase());

/** psql in the topology's primary, as its superuser over the socket. */
async function primarySql(sql: string): Promise<string> {
  return (await docker(["exec", project.container("postgres"), "psql", "-U", "postgres", "-d", "bets", "-tAc", sql])).trim();
}

async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${PROXY}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data!;
}

/** Seconds until every long-running service is healthy again (restart policy and healthchecks alone). */
async function untilAllHealthy(timeoutMs = 300_000): Promise<number> {
  const started = performance.now();
  await eventually(
    async () => {
      const states = await Promise.all(LONG_RUNNING.map((service) => containerState(project.container(service))));
      return states.every((state) => state.health === "healthy");
    },
    timeoutMs,
    "every service healthy",
    1_000,
  );
  return (performance.now() - started) / 1000;
}

/** A process's argv, or none once it has exited (a healthcheck's exec is short-lived). */
function argvOf(pid: number): string[] {
  try {
    return commandLine(pid);
  } catch {
    return [];
  }
}

/** One pino line of a container's log (other output: none). */
function logLine(line: string): { msg?: string; signal?: string }[] {
  try {
    return [JSON.parse(line) as { msg?: string; signal?: string }];
  } catch {
    return [];
  }
}

const dockerDaemon = await dockerService();

describeWith(dockerDaemon, "docker-compose.yml in containers (host network, loopback)", () => {
  beforeAll(async () => {
    await project.compose(["down", "-v", "--remove-orphans"]);
    await project.compose(["up", "-d", "--no-build"], 900_000);
    await untilAllHealthy(600_000);
  }, 1_000_000);

  afterAll(async () => {
    await project.compose(["down", "-v", "--remove-orphans"]);
  }, 300_000);

  it("ships the project image as the node user, with gateway as its command, and it starts and answers /livez", async () => {
    const [config] = JSON.parse(await docker(["image", "inspect", "bet-results-api:latest"])) as {
      Config: { User: string; Cmd: string[]; WorkingDir: string };
      Size: number;
    }[];
    expect(config!.Config.User).toBe("node");
    expect(config!.Config.Cmd).toEqual(["node", "--import=./bin/typescript.mjs", "bin/gateway.ts"]);
    expect(config!.Config.WorkingDir).toBe("/app");
    // Production dependencies only keep it near 0.9 GB (measured 915 MB); dev dependencies would double it.
    expect(config!.Size).toBeLessThan(1_200_000_000);
    const port = 14901;
    const name = `${project.name}-image-probe`;
    await docker(["rm", "-f", name]).catch(() => "");
    await docker([
      ...["run", "-d", "--name", name, "--network", "host"],
      ...["-e", "HOST=127.0.0.1", "-e", `PORT=${port}`, "-e", `DATABASE_URL=postgresql://bets_reader:reader@127.0.0.1:${HOST_PORTS.postgres}/bets`],
      ...["bet-results-api:latest", "node", "--import=./bin/typescript.mjs", "bin/subgraph.ts", "networks"],
    ]);
    try {
      await eventually(
        async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => undefined))?.status === 200,
        180_000,
        "the image's subgraph answering /livez",
        1_000,
      );
      expect((await docker(["exec", name, "id", "-un"])).trim()).toBe("node");
    } finally {
      await docker(["rm", "-f", name]);
    }
  }, 240_000);

  it("runs every service in its own container, listening on loopback only", async () => {
    const listening = await hostSockets("listening");
    for (const service of LONG_RUNNING) {
      const pids = await containerPids(project.container(service));
      const listeners = listening.filter((socket) => portOf(socket.local) === HOST_PORTS[service]);
      expect(listeners.length, service).toBeGreaterThan(0);
      for (const listener of listeners) {
        expect(listener.local, service).toMatch(/^127\.0\.0\.1:/);
        expect(
          listener.pids.some((pid) => pids.has(pid)),
          `${service}: ${listener.local} is held by ${listener.pids}`,
        ).toBe(true);
      }
    }
  });

  it("sends its database and Redis traffic to the containers, never to the machine's own", async () => {
    // Some traffic first, so every client has its connections open.
    await graphql("query($w: Address!) { playerBets(wallet: $w, first: 1) { totalCount } }", { w: wallets[0] });
    const established = await hostSockets("established");
    const topologyPids = new Set<number>();
    for (const id of await project.runningContainerIds()) for (const pid of await containerPids(id)) topologyPids.add(pid);
    const ofTopology = established.filter((socket) => socket.pids.some((pid) => topologyPids.has(pid)));
    const peerPorts = new Set(ofTopology.map((socket) => portOf(socket.peer)));
    expect(peerPorts.has(HOST_PORTS.postgres)).toBe(true);
    expect(peerPorts.has(HOST_PORTS.redis)).toBe(true);
    expect(peerPorts.has(MACHINE_PORTS.postgres)).toBe(false);
    expect(peerPorts.has(MACHINE_PORTS.redis)).toBe(false);
  });

  it("answers through nginx with the bets indexed from the local chain, as the primary holds them", async () => {
    await eventually(
      async () =>
        (await graphql<{ playerBets: { totalCount: number } }>("query($w: Address!) { playerBets(wallet: $w, first: 1) { totalCount } }", { w: wallets[0] }))
          .playerBets.totalCount > 0,
      120_000,
      "indexed bets through nginx",
      1_000,
    );
    const health = await fetch(`${PROXY}/health`);
    expect(health.status).toBe(200);
    expect((await fetch(`${PROXY}/metrics`)).status).toBe(404);
    // The answer through nginx and the primary container's rows agree (the simulator keeps betting:
    // both read at one indexed block).
    const { networkConfigs } = await graphql<{ networkConfigs: { chainId: number; indexing: { indexedBlock: string } }[] }>(
      "{ networkConfigs { chainId indexing { indexedBlock } } }",
    );
    const block = networkConfigs[0]!.indexing.indexedBlock;
    expect(Number(await primarySql(`SELECT count(*) FROM "Bet" WHERE "placedBlock" <= ${Number(block)}`))).toBeGreaterThan(0);
  });

  it("delivers a bet update over a WebSocket through nginx", async () => {
    const client = await connectClient(PROXY, "/socket.io");
    try {
      await client.subscribe({ all: true });
      await client.until(() => client.updates.length > 0, 60_000, "a firehose update");
      expect(client.updates[0]!.chainId).toBe(31337);
    } finally {
      client.close();
    }
  });

  it("has Prometheus scraping every service on its loopback port, every target up", async () => {
    const expected = Object.entries(SCRAPED)
      .flatMap(([job, services]) => services.map((service) => `${job} 127.0.0.1:${HOST_PORTS[service]}`))
      .sort();
    let seen: string[] = [];
    // A scrape every 15 s: wait until each target has been scraped, and scraped up.
    await eventually(
      async () => {
        const response = await fetch(`http://127.0.0.1:${HOST_PORTS["prometheus-host"]}/api/v1/query?query=up`);
        const { data } = (await response.json()) as { data: { result: { metric: { job: string; instance: string }; value: [number, string] }[] } };
        seen = data.result.map(({ metric, value }) => `${metric.job} ${metric.instance} up=${value[1]}`).sort();
        return seen.length === expected.length && seen.every((line) => line.endsWith(" up=1"));
      },
      180_000,
      () => `every target up, seen: ${seen.join(", ")}`,
      2_000,
    );
    expect(seen).toEqual(expected.map((target) => `${target} up=1`));
  }, 240_000);

  describe("faults with honest traffic (GraphQL and sockets through nginx)", () => {
    const rows: string[] = [];

    afterAll(() => {
      const header = "| fault | requests sent | failed | updates sent | received | duplicated | lost | resumes | ready again (s) |";
      console.log(["", header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", ...rows].join("\n"));
    });

    /** Runs `fault` under honest traffic, waits until every service is healthy, and checks the tally. */
    async function underTraffic(name: string, fault: () => Promise<void>): Promise<void> {
      const requests = graphqlLoop(`${PROXY}/graphql`, wallets);
      const sockets = socketClients(PROXY, "/socket.io", 4);
      await sockets.ready;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await fault();
      // Let the kill be seen before asking for health (a container may still say healthy).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const readyAfter = await untilAllHealthy();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const lastSeq = BigInt((await primarySql(`SELECT coalesce(max(seq), 0) FROM "BetUpdate"`)) || "0");
      await eventually(
        () => sockets.tally.received.every((seqs) => seqs.some((seq) => seq >= lastSeq)),
        60_000,
        () => `every client up to seq ${lastSeq}`,
        200,
      );
      sockets.stop();
      await requests.stop();
      // The earliest first subscription (bigints: no Math.min).
      const from = [...sockets.tally.from].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[0]!;
      const expected = (await primarySql(`SELECT seq FROM "BetUpdate" WHERE seq > ${from} AND seq <= ${lastSeq} ORDER BY seq`))
        .split("\n")
        .filter(Boolean)
        .map(BigInt);
      let received = 0;
      let duplicated = 0;
      let lost = 0;
      sockets.tally.received.forEach((seqs, index) => {
        const owed = expected.filter((seq) => seq > sockets.tally.from[index]!);
        const delivery = deliveryOf(
          seqs.filter((seq) => seq <= lastSeq),
          owed,
        );
        received += seqs.length;
        duplicated += delivery.duplicated;
        lost += delivery.lost.length;
      });
      const { tally } = requests;
      rows.push(
        `| ${name} | ${tally.sent} | ${tally.failed} | ${expected.length} × 4 | ${received} | ${duplicated} | ${lost} | ${sockets.tally.resumes} | ${readyAfter.toFixed(1)} |`,
      );
      expect(tally.failures).toEqual([]);
      expect(tally.headWentBack).toEqual([]);
      expect(duplicated).toBe(0);
      expect(lost).toBe(0);
    }

    /** SIGKILL of the container's main process from the host: the restart policy brings it back. */
    const sigkill = (service: HostService) => async () => {
      const { pid } = await containerState(project.container(service));
      process.kill(pid, "SIGKILL");
    };

    /** One replica after the other, each back to healthy before the next (SIGTERM, then SIGKILL after the grace period). */
    const rolling = (services: HostService[]) => async () => {
      for (const service of services) {
        await project.compose(["restart", service]);
        await eventually(async () => (await containerState(project.container(service))).health === "healthy", 300_000, `${service} healthy`, 1_000);
      }
    };

    /**
     * docker stop (compose's: SIGTERM, SIGKILL after the service's grace period). The signal must
     * reach node itself, the container's main process, which drains (its log line), exits 0 within
     * the grace period, and compose starts the service again.
     */
    const stop = (service: HostService, entry: string, drainMessage: string) => async () => {
      const container = project.container(service);
      const before = await containerState(container);
      const main = commandLine(before.pid);
      expect(basename(main[0]!), main.join(" ")).toBe("node");
      expect(main.slice(1)).toEqual(["--import=./bin/typescript.mjs", entry]);
      // No other process of the container runs the service (through npx it was a grandchild).
      const argvs = [...(await containerPids(container))].map((pid) => ({ pid, argv: argvOf(pid) }));
      expect(argvs.filter(({ pid, argv }) => pid !== before.pid && argv.includes(entry))).toEqual([]);
      await project.compose(["stop", service]);
      const after = await containerState(container);
      expect([after.status, after.exitCode], `${service}: status and exit code`).toEqual(["exited", 0]);
      const messages = (await docker(["logs", "--since", before.startedAt, container])).split("\n").flatMap(logLine);
      expect(messages).toContainEqual(expect.objectContaining({ msg: "shutting down", signal: "SIGTERM" }));
      expect(messages.map((line) => line.msg)).toContain(drainMessage);
      await project.compose(["start", service]);
    };

    const faults: [string, () => Promise<void>][] = [
      ["SIGKILL gateway-a", sigkill("gateway-a")],
      ["SIGKILL realtime-a", sigkill("realtime-a")],
      ["docker stop gateway-a, then start", stop("gateway-a", "bin/gateway.ts", "shutting down")],
      ["docker stop realtime-a, then start", stop("realtime-a", "bin/realtime.ts", "draining realtime connections")],
      ["SIGKILL postgres-replica", sigkill("postgres-replica")],
      ["SIGKILL redis", sigkill("redis")],
      ["SIGKILL indexer", sigkill("indexer")],
      ["rolling restart of the gateways", rolling(["gateway-a", "gateway-b"])],
      ["rolling restart of the realtime nodes", rolling(["realtime-a", "realtime-b"])],
    ];
    for (const [name, fault] of faults) it(name, () => underTraffic(name, fault), 900_000);
  });
});
