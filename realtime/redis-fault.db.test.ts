// Redis stopped under a running cluster (two nodes and a publisher as separate processes, on a
// private redis-server): the nodes deliver from the outbox themselves, health says DEGRADED; Redis
// back on the same port: the tier recovers without a restart, and clients — those that stayed and
// one that resumed with its last seq — end with every update exactly once, in order.
// PostgreSQL only (PGlite cannot be shared between processes).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import type { HealthReport } from "../core/health.ts";
import { createHealthMonitor } from "../gateway/health/report.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, keepWriting, wallet } from "../test/outbox.ts";
import { connectClient, scrape, seqs, startCluster, type Cluster, type ClusterNode, type TestClient } from "../test/realtime.ts";
import { testConfig } from "../test/config.ts";
import { privateRedisServer, serviceTitle, skipWithout } from "../test/services.ts";

const onPostgres = testConfig.TEST_DB === "postgres";
const A = wallet(1);
const B = wallet(2);

async function nodeHealth(node: ClusterNode): Promise<{ status: number; body: HealthReport }> {
  const response = await fetch(`${node.url}/health`);
  return { status: response.status, body: (await response.json()) as HealthReport };
}

const checkOf = (report: HealthReport, name: string) => report.checks.find((c) => c.name === name)?.status;

// Needs Redis: without it the suite says SKIPPED with the install command (never under CI).
const redisServer = privateRedisServer;
describe.skipIf(!onPostgres || skipWithout(redisServer))(serviceTitle("Redis stopped under a running realtime cluster (PostgreSQL only)", redisServer), () => {
  let db: TestDatabase;
  let redis: PrivateRedis;
  let cluster: Cluster;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await createNetworks(db, [1]);
    redis = await createPrivateRedis();
    cluster = await startCluster({
      databaseUrl: db.url!,
      redisUrl: redis.url,
      prefix: `bets-fault:${randomBytes(6).toString("hex")}:`,
      nodes: 2,
      publishers: 1,
      env: { METRICS_PORT: "0" },
    });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await cluster?.stop();
    await redis?.stop();
    await db?.close();
  });
  const connect = async (url: string) => {
    const client = await connectClient(url, "/ws");
    clients.push(client);
    return client;
  };

  it("degrades to local delivery (health DEGRADED), recovers by itself, and resumed clients lose nothing", async () => {
    const [nodeA, nodeB] = cluster.nodes as [ClusterNode, ClusterNode];
    const pids = [...cluster.nodes, ...cluster.publishers].map((c) => c.pid);
    const gatewayRedis = createRedisClient(redis.url, { logger: silentLogger(), role: "test-gateway", maxRetriesPerRequest: 1 });
    const gatewayHealth = createHealthMonitor({
      db,
      version: "test",
      logger: silentLogger(),
      subgraphUrls: () => ({}),
      redis: gatewayRedis,
      maxLagBlocks: 64,
      maxStalenessSeconds: 300,
      cacheMs: 0,
      probeTimeoutMs: 1_000,
    });
    let stopWriting = async (): Promise<void> => undefined;
    try {
      const firehose = await connect(nodeA.url);
      const walletOnB = await connect(nodeB.url);
      const leaver = await connect(nodeB.url);
      const since = BigInt(((await firehose.subscribe({ all: true })) as { seq: string }).seq);
      await walletOnB.subscribe({ wallets: [A] });
      await leaver.subscribe({ all: true });
      for (const node of [nodeA, nodeB]) expect((await nodeHealth(node)).body.status).toBe("OK");
      expect(checkOf(await gatewayHealth.report(), "redis")).toBe("OK");

      const writer = keepWriting(db, { players: [A, B], intervalMs: 25 });
      stopWriting = writer.stop;
      await firehose.until(() => firehose.updates.length >= 10, 15_000, "updates through Redis");

      // Redis goes away (its process is killed) while the outbox keeps growing.
      await redis.stop();
      const beforeOutage = writer.written.at(-1)!.seq;
      let seen: unknown;
      for (const node of [nodeA, nodeB]) {
        await eventually(
          async () => {
            seen = await nodeHealth(node);
            const { status, body } = seen as Awaited<ReturnType<typeof nodeHealth>>;
            return (
              status === 200 &&
              body.status === "DEGRADED" &&
              checkOf(body, "redis") === "DEGRADED" &&
              checkOf(body, "feed") === "DEGRADED" &&
              checkOf(body, "database") === "OK"
            );
          },
          15_000,
          () => `node health DEGRADED (last: ${JSON.stringify(seen)})`,
        );
      }
      await eventually(async () => checkOf(await gatewayHealth.report(), "redis") === "DEGRADED", 15_000, "gateway health: redis DEGRADED");
      expect((await gatewayHealth.report()).status).toBe("DEGRADED");

      // Local delivery: updates written after Redis went away reach clients on both nodes while it is still away.
      const duringOutage = (client: TestClient, count: number) =>
        client.until(() => client.updates.filter((u) => BigInt(u.seq) > beforeOutage).length >= count, 15_000, "updates during the outage");
      await duringOutage(firehose, 20);
      await duringOutage(walletOnB, 10);
      await duringOutage(leaver, 10);
      // The publisher drops what it cannot send instead of queueing it for the whole outage.
      const publisherMetrics = String((await cluster.publishers[0]!.waitFor("publisher metrics listening")).url);
      const outage = await scrape(publisherMetrics);
      expect(outage.publisher_redis_connected).toBe(0);
      expect(outage.publisher_messages_dropped_total).toBeGreaterThan(0);
      expect((await scrape(`${nodeA.url}/metrics`)).realtime_local_delivery).toBe(1);
      // A client drops out during the outage; it will resume after Redis is back.
      const leaverSeen = [...leaver.updates];
      leaver.close();
      expect(leaverSeen.length).toBeGreaterThan(0);

      // Redis back on the same port: the same processes recover by themselves.
      await redis.start();
      for (const node of [nodeA, nodeB]) {
        await eventually(
          async () => {
            seen = await nodeHealth(node);
            const { status, body } = seen as Awaited<ReturnType<typeof nodeHealth>>;
            return status === 200 && body.status === "OK";
          },
          30_000,
          () => `node health OK again (last: ${JSON.stringify(seen)})`,
        );
      }
      await eventually(async () => checkOf(await gatewayHealth.report(), "redis") === "OK", 15_000, "gateway health: redis OK again");
      expect([...cluster.nodes, ...cluster.publishers].map((c) => c.pid)).toEqual(pids);
      expect([...cluster.nodes, ...cluster.publishers].every((c) => c.running())).toBe(true);

      const resumed = await connect(nodeA.url);
      await resumed.subscribe({ all: true, sinceSeq: leaverSeen.at(-1)!.seq });
      const afterRecovery = writer.written.length;
      await eventually(() => writer.written.length >= afterRecovery + 20, 15_000, "writes after recovery");
      await writer.stop();

      const all = writer.written.filter((w) => w.seq > since).map((w) => w.seq);
      const ofA = writer.written.filter((w) => w.seq > since && w.player === A).map((w) => w.seq);
      await firehose.until(() => firehose.updates.length >= all.length, 15_000, "every update on node A");
      await walletOnB.until(() => walletOnB.updates.length >= ofA.length, 15_000, "every update of wallet A on node B");
      await resumed.until(() => leaverSeen.length + resumed.updates.length >= all.length, 15_000, "every update after the resume");
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(seqs(firehose.updates)).toEqual(all);
      expect(seqs(walletOnB.updates)).toEqual(ofA);
      expect([...seqs(leaverSeen), ...seqs(resumed.updates)]).toEqual(all);

      // Logs: the outage is a few transition lines per process, never a flood, and names no address.
      for (const child of [...cluster.nodes, ...cluster.publishers]) {
        const unavailable = child.json.filter((l) => l.msg === "redis unavailable");
        expect(unavailable.length).toBeGreaterThan(0);
        expect(unavailable.length).toBeLessThanOrEqual(4); // one per connection (publish, subscribe; a node's admission count and its points budget)
        expect(child.json.filter((l) => l.level === 50)).toEqual([]); // no error lines
        expect(JSON.stringify(child.json)).not.toContain(new URL(redis.url).host);
      }
      for (const node of [nodeA, nodeB]) {
        const transitions = node.json.filter((l) => typeof l.msg === "string" && l.msg.startsWith("feed ")).map((l) => l.msg);
        expect(transitions).toContain("feed unavailable: delivering from the outbox locally");
        expect(transitions.at(-1)).toBe("feed restored: delivering from the publisher's feed");
        expect(transitions.length).toBeLessThanOrEqual(4); // the outage, and at most a slow start
      }
    } finally {
      await stopWriting();
      gatewayRedis.disconnect();
    }
  });
});
