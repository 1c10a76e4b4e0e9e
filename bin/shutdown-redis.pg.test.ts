// SIGTERM with Redis away (issue 21): each process, run as an operator runs it (its bin/ entry point
// on PostgreSQL: gateways, with and without GATEWAY_SOCKETIO, realtime nodes, publishers, and
// `npm start`'s whole service), exits 0 within the documented bound (docs/guides/operating.md,
// "Deploys and restarts") whether Redis refuses connections, accepts them and never answers, or
// hangs after it answered; requests in flight when the signal comes still get their answers.
// Before, every process with a Socket.IO fan-out never exited: its Redis connections said QUIT and
// waited for a reply that could not come. And a gateway sometimes exited without answering its
// requests in flight (core/http.ts listenOn: connections of its extra listening sockets).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { freePort } from "../test/private-postgres.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { connectClient } from "../test/realtime.ts";
import { privateRedisServer, skipWithout } from "../test/services.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
/** The documented bound: a process with no sockets to drain is gone this long after SIGTERM. */
const SHUTDOWN_BOUND_MS = 10_000;
/** Past this (beyond the 30 s shutdown deadline of bin/wiring.ts), the process is taken as hung: SIGKILLed and the test fails. */
const HUNG_MS = 35_000;
const QUERY = "{ networkConfigs { chainId } }";

type RedisFault = "refused" | "blackholed" | "stalled";

/** A Redis URL in the given state; `stall()` turns a working one into a hung one (SIGSTOP). */
interface FaultyRedis {
  url: string;
  stall(): void;
  close(): Promise<void>;
}

async function faultyRedis(fault: RedisFault): Promise<FaultyRedis> {
  if (fault === "refused") return { url: `redis://127.0.0.1:${await freePort()}`, stall: () => undefined, close: async () => undefined };
  if (fault === "blackholed") {
    // Accepts every connection and never writes a byte: a Redis hung since before the process started.
    const held: Socket[] = [];
    const server: Server = createServer((socket) => {
      socket.on("error", () => undefined);
      held.push(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    return {
      url: `redis://127.0.0.1:${port}`,
      stall: () => undefined,
      close: async () => {
        for (const socket of held) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }
  const redis: PrivateRedis = await createPrivateRedis();
  return {
    url: redis.url,
    stall: () => redis.freeze(),
    close: async () => {
      redis.thaw();
      await redis.stop();
    },
  };
}

async function ask(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: QUERY }),
    signal: AbortSignal.timeout(HUNG_MS),
  });
  return { status: response.status, body: await response.text() };
}

/** SIGTERM to `child` by its pid; how long it took to exit and how, or "hung" (then SIGKILLed). */
async function terminate(child: Spawned): Promise<{ ms: number; exit: { code: number | null; signal: NodeJS.Signals | null } | "hung" }> {
  const signalled = performance.now();
  process.kill(child.pid, "SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([child.exited, new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), HUNG_MS)))]);
  clearTimeout(timer);
  const ms = performance.now() - signalled;
  if (exit === "hung") await child.stop({ signal: "SIGKILL" });
  return { ms, exit };
}

/** SIGTERM to `child`: it exits 0 within SHUTDOWN_BOUND_MS. */
async function expectPromptExit(child: Spawned): Promise<void> {
  const { ms, exit } = await terminate(child);
  expect(exit, `log tail:\n${child.lines.slice(-6).join("\n")}`).toEqual({ code: 0, signal: null });
  expect(ms).toBeLessThan(SHUTDOWN_BOUND_MS);
}

/** Three answers, then Redis hangs with three requests in flight: `child` exits promptly on SIGTERM, and all three are answered. */
async function expectAnsweredThroughShutdown(child: Spawned, url: string, redis: FaultyRedis): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await ask(url)).status).toBe(200);
  redis.stall();
  const inFlight = [ask(url), ask(url), ask(url)];
  await new Promise((resolve) => setTimeout(resolve, 200));
  await expectPromptExit(child);
  for (const answer of await Promise.all(inFlight)) expect(answer).toMatchObject({ status: 200, body: expect.stringContaining('"networkConfigs"') });
}

const skip = !onPostgres || skipWithout(privateRedisServer);

describe.skipIf(skip)("SIGTERM with Redis away: every process exits within the bound", () => {
  let db: TestDatabase;
  let subgraph: Spawned;
  let subgraphUrl: string;
  const children: Spawned[] = [];

  const shared = () => ({
    DATABASE_URL: db.url,
    DATABASE_MIGRATE_ON_START: "false",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    NODE_ENV: "production",
    CURSOR_SECRET: "shutdown-redis test cursor secret",
    METRICS_PORT: undefined,
    REALTIME_PUBLISHER: undefined,
    RESPONSE_CACHE_REDIS_URL: undefined,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    subgraphUrl = `http://127.0.0.1:${port}/graphql`;
    subgraph = spawnTypeScript("bin/subgraph.ts", { name: "networks", args: ["networks"], env: { ...shared(), PORT: String(port), REDIS_URL: undefined } });
    await subgraph.waitForJson((line) => line.msg === "subgraph listening", 60_000, "subgraph listening");
  }, 120_000);
  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop({ signal: "SIGKILL" })));
    await subgraph?.stop();
    await db?.close();
  });

  const gatewayCase = (fault: RedisFault, socketio: boolean) =>
    it(`gateway${socketio ? " with GATEWAY_SOCKETIO" : ""}, Redis ${fault}: answers its requests in flight and exits 0 within ${SHUTDOWN_BOUND_MS / 1000} s`, async () => {
      const redis = await faultyRedis(fault);
      try {
        const port = await freePort();
        const nobody = `http://127.0.0.1:${await freePort()}/graphql`;
        const url = `http://127.0.0.1:${port}`;
        const gateway = spawnTypeScript("bin/gateway.ts", {
          name: "gateway",
          env: {
            ...shared(),
            PORT: String(port),
            REDIS_URL: redis.url,
            RESPONSE_CACHE: "on",
            // Long enough that requests sent once Redis hangs are still waiting on it when SIGTERM comes.
            REDIS_COMMAND_TIMEOUT_MS: "1000",
            GATEWAY_SOCKETIO: socketio ? "1" : "0",
            NETWORKS_SUBGRAPH_URL: subgraphUrl,
            RESULTS_SUBGRAPH_URL: nobody,
            HISTORY_SUBGRAPH_URL: nobody,
          },
        });
        children.push(gateway);
        await gateway.waitForJson((line) => line.msg === (socketio ? "realtime node attached" : "gateway listening"), 45_000, "ready");
        await expectAnsweredThroughShutdown(gateway, url, redis);
      } finally {
        await redis.close();
      }
    }, 60_000);

  const realtimeCase = (fault: RedisFault) =>
    it(`realtime node, Redis ${fault}: drains its socket and exits 0 within ${SHUTDOWN_BOUND_MS / 1000} s`, async () => {
      const redis = await faultyRedis(fault);
      try {
        const port = await freePort();
        const node = spawnTypeScript("bin/realtime.ts", { name: "realtime", env: { ...shared(), PORT: String(port), REDIS_URL: redis.url } });
        children.push(node);
        const ready = await node.waitForJson<{ path: string }>((line) => line.msg === "realtime node ready", 45_000, "ready");
        const client = await connectClient(`http://127.0.0.1:${port}`, ready.path);
        try {
          redis.stall();
          await new Promise((resolve) => setTimeout(resolve, 500));
          await expectPromptExit(node);
          expect(client.socket.connected).toBe(false);
        } finally {
          client.socket.close();
        }
      } finally {
        await redis.close();
      }
    }, 60_000);

  const publisherCase = (fault: RedisFault) =>
    it(`publisher, Redis ${fault}: exits 0 within ${SHUTDOWN_BOUND_MS / 1000} s`, async () => {
      const redis = await faultyRedis(fault);
      try {
        const publisher = spawnTypeScript("bin/publisher.ts", {
          name: "publisher",
          env: { ...shared(), REDIS_URL: redis.url, REALTIME_POLL_INTERVAL_MS: "200" },
        });
        children.push(publisher);
        await publisher.waitForJson((line) => line.msg === "publisher active", 45_000, "active");
        redis.stall();
        // A few polls (and heartbeats) while Redis hangs.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await expectPromptExit(publisher);
      } finally {
        await redis.close();
      }
    }, 60_000);

  // `npm start`'s whole service (PGlite, the fixtures, no chain): both Redis URLs hang under it.
  it(`npm start, REDIS_URL stalled and RESPONSE_CACHE_REDIS_URL blackholed: answers its requests in flight and exits 0 within ${SHUTDOWN_BOUND_MS / 1000} s`, async () => {
    const [redis, cacheRedis] = await Promise.all([faultyRedis("stalled"), faultyRedis("blackholed")]);
    const dataDir = mkdtempSync(join(tmpdir(), "shutdown-redis-"));
    try {
      const service = spawnTypeScript("bin/start.ts", {
        name: "npm start",
        env: {
          ...shared(),
          DATABASE_URL: "",
          DATABASE_MIGRATE_ON_START: undefined,
          DATA_DIR: dataDir,
          PORT: "0",
          DEMO_MODE: "fixtures",
          DEMO_BETS: "5",
          NETWORKS_CONFIG: "",
          REDIS_URL: redis.url,
          RESPONSE_CACHE_REDIS_URL: cacheRedis.url,
          REDIS_COMMAND_TIMEOUT_MS: "1000",
        },
      });
      children.push(service);
      // A fresh checkout builds the live page first (web/dist/).
      const ready = await service.waitForJson<{ graphql: string }>((line) => line.msg === "Public Bet Results API ready", 90_000, "ready");
      const url = ready.graphql.replace(/\/graphql$/, "");
      await expectAnsweredThroughShutdown(service, url, redis);
    } finally {
      await Promise.all([redis.close(), cacheRedis.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 150_000);

  for (const fault of ["refused", "blackholed", "stalled"] as const) gatewayCase(fault, true);
  for (const fault of ["refused", "blackholed", "stalled"] as const) gatewayCase(fault, false);
  for (const fault of ["refused", "blackholed", "stalled"] as const) realtimeCase(fault);
  for (const fault of ["refused", "blackholed", "stalled"] as const) publisherCase(fault);
});
