// GET /livez and /readyz of every long-running process, each run as an operator runs it (its bin/
// entry point, a private PostgreSQL and Redis, a local chain for the indexer): ready once up, a
// dead database makes every one of them 503 with `database: …` in its reasons while /livez stays
// 200, a dead Redis takes the publisher out (it cannot publish) but not a realtime node (it
// delivers from the outbox itself, shown in `feed`), and all of them come back by themselves.
// The gateway stays ready with one of its subgraphs away and leaves only when none answers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import type { ReadinessReport } from "../core/probes.ts";
import { networksFileJson, startTestChain, type TestChain } from "../test/chain.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivatePostgres, freePort, type PrivatePostgres, privatePostgresServer } from "../test/private-postgres.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { describeWith, privateRedisServer } from "../test/services.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";

const services = [privatePostgresServer, privateRedisServer];

interface Probe {
  status: number;
  body: ReadinessReport;
}

async function probe(url: string): Promise<Probe> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as ReadinessReport };
}

describeWith(services, "/livez and /readyz of every process", () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let chain: TestChain;
  let dir: string;
  const children: Spawned[] = [];
  /** Each process's probe base URL, by name. */
  const bases: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "probes-"));
    postgres = await createPrivatePostgres();
    redis = await createPrivateRedis();
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query("CREATE DATABASE bets");
    await admin.end();
    const databaseUrl = postgres.url.replace(/\/postgres$/, "/bets");
    const migrated = await openDatabase({ url: databaseUrl, logger: silentLogger(), migrate: true });
    await migrated.close();
    chain = await startTestChain();
    const networksConfig = join(dir, "networks.json");
    writeFileSync(networksConfig, networksFileJson(chain.network({ rpc: { http: chain.anvil.rpcUrl } })));

    const ports = { results: await freePort(), gateway: await freePort(), realtime: await freePort(), publisher: await freePort(), indexer: await freePort() };
    const shared = { DATABASE_URL: databaseUrl, HOST: "127.0.0.1", LOG_LEVEL: "info", NODE_ENV: "production", DATABASE_MIGRATE_ON_START: "false" };
    const start = (name: string, script: string, env: Record<string, string | undefined>, args: string[] = []) =>
      children.push(spawnTypeScript(script, { name, args, env: { ...shared, REDIS_URL: undefined, PORT: undefined, METRICS_PORT: undefined, ...env } }));
    start("results", "bin/subgraph.ts", { PORT: String(ports.results) }, ["results"]);
    // Only `results` runs: the gateway's other subgraphs point at a port nobody listens on.
    const nobody = `http://127.0.0.1:${await freePort()}/graphql`;
    start("gateway", "bin/gateway.ts", {
      PORT: String(ports.gateway),
      RESULTS_SUBGRAPH_URL: `http://127.0.0.1:${ports.results}/graphql`,
      NETWORKS_SUBGRAPH_URL: nobody,
      HISTORY_SUBGRAPH_URL: nobody,
    });
    start("realtime", "bin/realtime.ts", { PORT: String(ports.realtime), REDIS_URL: redis.url });
    start("publisher", "bin/publisher.ts", { METRICS_PORT: String(ports.publisher), REDIS_URL: redis.url });
    start("indexer", "bin/indexer.ts", { METRICS_PORT: String(ports.indexer), NETWORKS_CONFIG: networksConfig, PROOF_VERIFY_WORKERS: "0" });
    for (const [name, port] of Object.entries(ports)) bases[name] = `http://127.0.0.1:${port}`;
  }, 180_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop()));
    await chain?.stop();
    await redis?.stop();
    postgres?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const stderrOf = (name: string) => children.find((child) => child.name === name)?.stderr() ?? "";

  const readyEverywhere = async () => {
    for (const [name, base] of Object.entries(bases)) {
      await eventually(
        async () => (await probe(`${base}/readyz`)).status === 200,
        120_000,
        () => `${name} ready: ${stderrOf(name)}`,
        250,
      );
    }
  };

  it("serves /livez and /readyz on every process once it is up", async () => {
    await readyEverywhere();
    for (const base of Object.values(bases)) {
      const live = await fetch(`${base}/livez`);
      expect(live.status).toBe(200);
      expect(await live.json()).toMatchObject({ status: "ALIVE" });
      const ready = await probe(`${base}/readyz`);
      expect(ready.body).toMatchObject({ status: "READY", reasons: [] });
      expect(ready.body.checks).toContainEqual(expect.objectContaining({ name: "database", status: "OK" }));
    }
    // Two of the gateway's three subgraphs never answer: /health says so, and it serves what it can.
    const gateway = await probe(`${bases.gateway}/readyz`);
    expect(gateway.body.checks).toContainEqual(expect.objectContaining({ name: "subgraph:history", status: "DOWN" }));
    expect(gateway.body.checks).toContainEqual(expect.objectContaining({ name: "subgraph:results", status: "OK" }));
    expect((await probe(`${bases.publisher}/readyz`)).body.checks).toContainEqual(expect.objectContaining({ name: "publisher", detail: "active" }));
  }, 180_000);

  it("answers ?backfilled= by the networks' backfill, and refuses a malformed one", async () => {
    const chainId = chain.anvil.chainId;
    await eventually(async () => (await probe(`${bases.indexer}/readyz?backfilled=all`)).status === 200, 60_000, "the backfill");
    const done = await probe(`${bases.gateway}/readyz?backfilled=${chainId}`);
    expect(done.status).toBe(200);
    expect(done.body.checks).toContainEqual(expect.objectContaining({ name: `backfill:localnet-${chainId}`, status: "OK" }));
    const unknown = await probe(`${bases.gateway}/readyz?backfilled=${chainId},999`);
    expect(unknown.status).toBe(503);
    expect(unknown.body.reasons).toEqual(["backfill:999: not indexed yet"]);
    expect((await fetch(`${bases.gateway}/readyz?backfilled=soon`)).status).toBe(400);
  }, 90_000);

  it("takes the publisher out while Redis is down, keeps realtime nodes in (local delivery), and brings it back", async () => {
    await redis.stop();
    try {
      await eventually(async () => (await probe(`${bases.publisher}/readyz`)).status === 503, 30_000, "the publisher not ready");
      expect((await probe(`${bases.publisher}/readyz`)).body.reasons).toContain("redis: unreachable");
      const realtime = await probe(`${bases.realtime}/readyz`);
      expect(realtime.status).toBe(200);
      expect(realtime.body.checks).toContainEqual(expect.objectContaining({ name: "redis", status: "DEGRADED" }));
    } finally {
      await redis.start();
    }
    await readyEverywhere();
  }, 120_000);

  it("answers 503 naming the database on every process while it is down, 200 on /livez, and recovers", async () => {
    postgres.stop();
    try {
      for (const [name, base] of Object.entries(bases)) {
        await eventually(async () => (await probe(`${base}/readyz`)).status === 503, 30_000, `${name} not ready without its database`);
        const down = await probe(`${base}/readyz`);
        expect(down.body.status).toBe("NOT_READY");
        expect(down.body.reasons.filter((reason) => /^database: (unreachable|timed out)$/.test(reason))).toHaveLength(1);
        expect((await fetch(`${base}/livez`)).status).toBe(200);
      }
    } finally {
      postgres.start();
    }
    await readyEverywhere();
  }, 180_000);

  it("takes the gateway out once none of its subgraphs answers", async () => {
    const results = children.find((child) => child.name === "results")!;
    await results.stop();
    await eventually(async () => (await probe(`${bases.gateway}/readyz`)).status === 503, 30_000, "the gateway not ready");
    const reasons = (await probe(`${bases.gateway}/readyz`)).body.reasons;
    expect(reasons).toContain("subgraph:results: unreachable");
    expect(reasons).not.toContain("database: unreachable");
  }, 60_000);
});
