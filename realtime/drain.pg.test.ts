// SIGTERM on a realtime node (a separate process, behind a load balancer): it stops accepting,
// tells its sockets `server:draining`, closes them so that a stock socket.io-client reconnects by
// itself — through the balancer, to the other node — and exits 0 within its grace period. Clients
// resuming with their last seq end with every update exactly once, in order.
// PostgreSQL only (PGlite cannot be shared between processes).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import type { DrainingNotice, SubscribedPayload } from "./events.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, keepWriting, wallet } from "../test/outbox.ts";
import {
  connectClient,
  resumingClient,
  seqs,
  startBalancer,
  startCluster,
  type Balancer,
  type Cluster,
  type ClusterNode,
  type ResumingClient,
  type TypedClientSocket,
} from "../test/realtime.ts";
import { testConfig } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

const REDIS_URL = testConfig.TEST_REDIS_URL;
const onPostgres = testConfig.TEST_DB === "postgres";
const GRACE_MS = 8_000;
const A = wallet(1);
const B = wallet(2);

/** A stock client that resumes on every connect, and keeps the `server:draining` notices it gets. */
async function drainedClient(url: string): Promise<ResumingClient & { drainingNotices: DrainingNotice[] }> {
  const client = Object.assign(await resumingClient(url), { drainingNotices: [] as DrainingNotice[] });
  client.socket.on("server:draining", (notice) => client.drainingNotices.push(notice));
  return client;
}

// Needs Redis: without it the suite says SKIPPED with the install command (never under CI).
const redisServer = await redisService();
describe.skipIf(!onPostgres || skipWithout(redisServer))(serviceTitle("SIGTERM drains a realtime node (PostgreSQL only)", redisServer), () => {
  let db: TestDatabase;
  let cluster: Cluster;
  let balancer: Balancer;
  const sockets: TypedClientSocket[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await createNetworks(db, [1]);
    cluster = await startCluster({
      databaseUrl: db.url!,
      redisUrl: REDIS_URL,
      prefix: `bets-drain:${randomBytes(6).toString("hex")}:`,
      nodes: 2,
      publishers: 1,
      env: { REALTIME_DRAIN_GRACE_MS: String(GRACE_MS) },
    });
    const [nodeA, nodeB] = cluster.nodes as [ClusterNode, ClusterNode];
    balancer = await startBalancer([nodeA.url, nodeB.url]);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await balancer?.close();
    await cluster?.stop();
    await db?.close();
  });

  it("clients told to reconnect do so by themselves, to the other node, and lose nothing; the node exits 0 within the grace period", async () => {
    const [nodeA, nodeB] = cluster.nodes as [ClusterNode, ClusterNode];
    const drained = await Promise.all(Array.from({ length: 3 }, () => drainedClient(balancer.url)));
    sockets.push(...drained.map((c) => c.socket));
    expect(balancer.routed.get(nodeA.url)).toBe(3); // the balancer's first choice while it listens
    const control = await connectClient(nodeB.url, "/ws");
    sockets.push(control.socket);
    const controlSince = BigInt(((await control.subscribe({ wallets: [A] })) as SubscribedPayload).seq);

    const writer = keepWriting(db, { players: [A, B], intervalMs: 20 });
    try {
      for (const client of drained) await eventually(() => client.updates.length >= 10, 15_000, "updates before SIGTERM");

      const exited = new Promise<{ code: number | null; ms: number }>((resolve) => {
        const started = performance.now();
        nodeA.child.once("exit", (code) => resolve({ code, ms: performance.now() - started }));
      });
      process.kill(nodeA.pid, "SIGTERM");
      const { code, ms } = await exited;
      expect(code).toBe(0);
      expect(ms).toBeLessThan(GRACE_MS);
      expect(nodeA.json.some((l) => l.msg === "draining realtime connections")).toBe(true);

      for (const client of drained) {
        await eventually(() => client.connects === 2, 15_000, "an automatic reconnect");
        expect(client.drainingNotices).toHaveLength(1);
        expect(client.drainingNotices[0]!.message).toMatch(/reconnect/);
        // A transport-level close: socket.io-client reconnects (after "io server disconnect" it would not).
        expect(client.disconnectReasons).toEqual(["transport close"]);
      }
      expect(balancer.routed.get(nodeB.url)).toBe(3);

      const afterReconnect = writer.written.length;
      await eventually(() => writer.written.length >= afterReconnect + 20, 15_000, "writes after the reconnect");
    } finally {
      await writer.stop();
    }
    for (const client of drained) {
      const expected = writer.written.filter((w) => w.seq > client.since).map((w) => w.seq);
      await eventually(() => client.updates.length >= expected.length, 15_000, "every update after the resume");
    }
    const controlExpected = writer.written.filter((w) => w.seq > controlSince && w.player === A).map((w) => w.seq);
    await control.until(() => control.updates.length >= controlExpected.length, 15_000, "the control client's updates");
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const client of drained) {
      expect(seqs(client.updates)).toEqual(writer.written.filter((w) => w.seq > client.since).map((w) => w.seq));
    }
    expect(seqs(control.updates)).toEqual(controlExpected);
  });
});
