// docker-compose.yml run as processes on loopback, since no Docker engine runs here: a private
// PostgreSQL initialised with deploy/postgres/roles.sql as the postgres image's init script does,
// a private Redis, the local-chain profile's anvil and simulator, then every service with the
// compose file's own command and environment (only hostnames, ports and the listen address
// rewritten for loopback). Compose's healthchecks are run as Compose runs them, the API answers
// with indexed bets (the example networks file names the contracts the simulator deploys), each
// role can do its work and no more, and every metric the alert rules and the Grafana dashboard
// read exists in the live /metrics of the services.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parse } from "yaml";
import { type AnvilInstance, startAnvil } from "../chain/anvil.ts";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { type ComposeService, connectionsPerProcess, loadCompose } from "../test/compose.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivatePostgres, freePort, type PrivatePostgres, postgresProgram, privatePostgresServer } from "../test/private-postgres.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { exposedMetricNames, promqlMetricNames } from "../test/promql.ts";
import { describeWith, privateRedisServer } from "../test/services.ts";
import { type Spawned, spawnChild, spawnTypeScript } from "../test/spawn.ts";

// CI installs every one (.ci/run); elsewhere the suite says SKIPPED, why, and how to install it.
const services = [privatePostgresServer, privateRedisServer];

/** The services run here: one replica of each kind, in dependency order. */
const RUN = ["networks", "results", "history", "indexer", "publisher", "realtime-a", "gateway-a"] as const;

describeWith(services, "docker-compose.yml run as processes", () => {
  const compose = loadCompose();
  const children: Spawned[] = [];
  const ports = new Map<string, number>();
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let anvil: AnvilInstance;
  let dir: string;
  let env: Record<string, Record<string, string>>;

  /** `http://host:port` of a compose service → loopback and its port here. */
  const rewrite = (value: string): string =>
    value.replace(/\/\/(?:([^@/\s]*)@)?([a-z0-9-]+):(\d+)/g, (match, auth: string | undefined, host: string, port: string) => {
      const mapped = ports.get(`${host}:${port}`);
      return mapped === undefined ? match : `//${auth ? `${auth}@` : ""}127.0.0.1:${mapped}`;
    });

  /** A service's environment as its container gets it, rewritten for loopback. */
  const environmentOf = (name: string, service: ComposeService): Record<string, string> => {
    const result: Record<string, string> = {};
    for (const [key, value] of Object.entries(service.environment ?? {})) result[key] = rewrite(value);
    if (result.HOST) result.HOST = "127.0.0.1";
    for (const key of ["PORT", "METRICS_PORT"]) if (result[key]) result[key] = String(ports.get(`${name}:${service.environment![key]}`));
    if (result.NETWORKS_CONFIG) result.NETWORKS_CONFIG = join(dir, "networks.json");
    return result;
  };

  /** Runs a service's compose healthcheck (`node deploy/healthcheck.mjs <url>`) with its URL rewritten. */
  const healthcheck = async (name: string): Promise<number | null> => {
    const [, runner, script, url] = compose.services[name]!.healthcheck!.test;
    const port = new URL(url!).port;
    const check = spawnChild({
      command: process.execPath,
      args: [script!, `http://127.0.0.1:${ports.get(`${name}:${port}`)}${new URL(url!).pathname}`],
      stdout: "ignore",
    });
    expect(runner).toBe("node");
    return (await check.closed).code;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "topology-"));
    postgres = await createPrivatePostgres();
    redis = await createPrivateRedis();
    anvil = await startAnvil({ blockTime: 1, chainId: 31337 });
    const pgPort = new URL(postgres.url).port;
    ports.set("postgres:5432", Number(pgPort));
    ports.set("redis:6379", Number(new URL(redis.url).port));
    // The response cache's own Redis (redis-cache) is the same server here: its bounds are compose's, not what this test checks.
    ports.set("redis-cache:6379", Number(new URL(redis.url).port));
    ports.set("anvil:8545", Number(new URL(anvil.rpcUrl).port));
    for (const [name, service] of Object.entries(compose.services)) {
      for (const key of ["PORT", "METRICS_PORT"]) {
        const port = service.environment?.[key];
        if (port) {
          const free = await freePort();
          ports.set(`${name}:${port}`, free);
        }
      }
    }

    // The postgres image: POSTGRES_DB, then /docker-entrypoint-initdb.d/10-roles.sh with the
    // service's environment (passwords), i.e. psql over deploy/postgres/roles.sql.
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query("CREATE DATABASE bets");
    await admin.end();
    const pgEnv = compose.services.postgres!.environment!;
    const initScript = readFileSync("deploy/postgres/init-roles.sh", "utf8");
    expect(initScript).toContain("-f /etc/bet-results/roles.sql");
    const psql = spawnChild({
      command: postgresProgram("psql"),
      args: [
        `postgresql://postgres@127.0.0.1:${pgPort}/bets`,
        ...["-v", "ON_ERROR_STOP=1", "-v", "migrator=bets_migrator", "-v", `migrator_password=${pgEnv.DB_MIGRATOR_PASSWORD}`],
        ...["-v", "writer=bets_writer", "-v", `writer_password=${pgEnv.DB_WRITER_PASSWORD}`],
        ...["-v", "reader=bets_reader", "-v", `reader_password=${pgEnv.DB_READER_PASSWORD}`],
        ...["-f", "deploy/postgres/roles.sql"],
      ],
      stdout: "ignore",
    });
    const psqlExit = await psql.closed;
    if (psqlExit.code !== 0) throw new Error(`roles.sql failed: ${psql.stderr()}`);

    const networks = JSON.parse(readFileSync("deploy/networks.json", "utf8")) as { networks: { rpc: Record<string, string> }[] };
    for (const network of networks.networks) for (const key of Object.keys(network.rpc)) network.rpc[key] = rewrite(network.rpc[key]!);
    writeFileSync(join(dir, "networks.json"), JSON.stringify(networks));

    env = {};
    for (const name of ["migrate", "simulator", ...RUN]) env[name] = environmentOf(name, compose.services[name]!);

    // migrate: one-shot, must complete before the others start.
    const migrate = spawnTypeScript(compose.services.migrate!.command![2]!, { env: env.migrate, stdout: "ignore" });
    children.push(migrate);
    const migrated = await migrate.closed;
    if (migrated.code !== 0) throw new Error(`migrate failed: ${migrate.stderr()}`);

    // simulator (profile local-chain): deploys the contracts, then places and settles bets.
    const [, , simulatorScript, ...simulatorArgs] = compose.services.simulator!.command!;
    const deploymentFile = join(dir, "deployment.json");
    const simulator = spawnTypeScript(simulatorScript!, {
      args: simulatorArgs.map((arg) => (arg === "/tmp/deployment.json" ? deploymentFile : rewrite(arg))),
      env: env.simulator,
      stdout: "ignore",
    });
    children.push(simulator);
    await eventually(
      () => readdirSync(dir).includes("deployment.json"),
      60_000,
      () => `the simulator's deployment: ${simulator.stderr()}`,
    );

    for (const name of RUN) {
      const [, , script, ...args] = compose.services[name]!.command!;
      children.push(spawnTypeScript(script!, { args, env: env[name], stdout: "ignore", name }));
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop()));
    await anvil?.stop();
    await redis?.stop();
    postgres?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("passes every service's compose healthcheck", async () => {
    for (const name of RUN) {
      const stderr = () => children.find((child) => child.name === name)?.stderr() ?? "";
      await eventually(
        async () => (await healthcheck(name)) === 0,
        180_000,
        () => `${name}'s healthcheck: ${stderr()}`,
        500,
      );
      expect(await healthcheck(name)).toBe(0);
    }
  }, 240_000);

  it("serves the bets the simulator places on the chain of the example networks file", async () => {
    const gateway = `http://127.0.0.1:${env["gateway-a"]!.PORT}/graphql`;
    const players = DEV_PLAYER_KEYS.map((key) => privateKeyToAccount(key).address.toLowerCase());
    const totalCount = async () => {
      const response = await fetch(gateway, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "query($w: Address!) { playerBets(wallet: $w, first: 1) { totalCount } }", variables: { w: players[0] } }),
      });
      const body = (await response.json()) as { data?: { playerBets: { totalCount: number } }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      return body.data!.playerBets.totalCount;
    };
    await eventually(async () => (await totalCount()) > 0, 90_000, "a dev player's indexed bets", 1_000);
    expect(await totalCount()).toBeGreaterThan(0);
  }, 120_000);

  it("lets each role do its work and no more", async () => {
    const as = async <T>(service: string, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
      const client = new pg.Client({ connectionString: env[service]!.DATABASE_URL });
      await client.connect();
      try {
        return await fn(client);
      } finally {
        await client.end();
      }
    };
    const count = (client: pg.Client) => client.query('SELECT count(*)::int AS n FROM "Bet"').then((r) => (r.rows[0] as { n: number }).n);
    expect(await as("results", count)).toBeGreaterThan(0);
    const refused = await as("results", (client) =>
      client.query('DELETE FROM "Bet" WHERE false').then(
        () => undefined,
        (error: { code?: string }) => error.code,
      ),
    );
    expect(["25006", "42501"]).toContain(refused); // read-only transaction / permission denied
    const refusedDdl = await as("indexer", (client) =>
      client.query('DROP TABLE "Bet"').then(
        () => undefined,
        (error: { code?: string }) => error.code,
      ),
    );
    expect(refusedDdl).toBe("42501");
    // The writer's rows go through: the indexer has committed bets (above), and the publisher may
    // prune the outbox (asked, not done: only core/outbox.ts writes that table); a reader may not.
    const mayPrune = (service: string) =>
      as(service, (client) =>
        client.query<{ ok: boolean }>(`SELECT has_table_privilege(current_user, '"BetUpdate"', 'DELETE') AS ok`).then((r) => r.rows[0]!.ok),
      );
    expect(await mayPrune("publisher")).toBe(true);
    expect(await mayPrune("results")).toBe(false);
  });

  it("stays within each process's connection budget", async () => {
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    const { rows } = await admin.query<{ usename: string; n: number }>(
      "SELECT usename, count(*)::int AS n FROM pg_stat_activity WHERE datname = 'bets' AND usename LIKE 'bets_%' GROUP BY usename",
    );
    await admin.end();
    const measured = Object.fromEntries(rows.map((row) => [row.usename, row.n]));
    const budget = (names: readonly string[]) => names.reduce((sum, name) => sum + connectionsPerProcess(compose.services[name]!), 0);
    expect(measured.bets_reader ?? 0).toBeLessThanOrEqual(budget(["networks", "results", "history", "realtime-a", "gateway-a"]));
    expect(measured.bets_writer ?? 0).toBeLessThanOrEqual(budget(["indexer", "publisher"]));
    expect(measured.bets_writer).toBeGreaterThan(0);
  });

  it("exposes every metric the alert rules and the Grafana dashboard read", async () => {
    const exposed = new Set<string>(["up"]); // Prometheus's own, per target
    for (const name of RUN) {
      const port = env[name]!.METRICS_PORT ?? env[name]!.PORT;
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const metric of exposedMetricNames(text)) exposed.add(metric);
    }
    const rules = parse(readFileSync("deploy/prometheus/alerts.yml", "utf8")) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const dashboard = JSON.parse(readFileSync("deploy/grafana/dashboards/bet-results-api.json", "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const used = [
      ...rules.groups.flatMap((group) => group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }))),
      ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ where: `panel ${panel.title}`, expr: target.expr }))),
    ];
    expect(used.length).toBeGreaterThan(10);
    const missing = used.flatMap(({ where, expr }) =>
      promqlMetricNames(expr)
        .filter((metric) => !exposed.has(metric))
        .map((metric) => `${where}: ${metric}`),
    );
    expect(missing).toEqual([]);
  });

  it("scrapes every service on the port it serves /metrics on", () => {
    const prometheus = parse(readFileSync("deploy/prometheus/prometheus.yml", "utf8")) as {
      scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; port: number }[] }[];
    };
    const targets = prometheus.scrape_configs.flatMap((job) => [
      ...(job.static_configs ?? []).flatMap((config) => config.targets),
      ...(job.dns_sd_configs ?? []).flatMap((config) => config.names.map((name) => `${name}:${config.port}`)),
    ]);
    const expected = Object.entries(compose.services)
      .filter(
        ([, service]) => service.build === "." && (service.environment?.METRICS_PORT || service.command?.[2]?.match(/bin\/(gateway|subgraph|realtime)\.ts/)),
      )
      .map(([name, service]) => `${name}:${service.environment!.METRICS_PORT ?? service.environment!.PORT}`);
    expect(targets.sort()).toEqual(expected.sort());
  });
});
