// Realtime nodes and publishers as separate processes (tsx children on loopback ports) sharing a
// PostgreSQL database and Redis: what production runs. PostgreSQL only — PGlite serves one
// connection inside one process, so there is nothing to share between processes.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { conventionViolations } from "../test/stack.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, scrape, seqs, startCluster, type Cluster, type TestClient } from "../test/realtime.ts";
import { testConfig } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

const REDIS_URL = testConfig.TEST_REDIS_URL;
const onPostgres = testConfig.TEST_DB === "postgres";
const A = wallet(1);
const B = wallet(2);

// Needs Redis: without it the suite says SKIPPED with the install command (never under CI).
const redisServer = await redisService();
describe.skipIf(!onPostgres || skipWithout(redisServer))(
  serviceTitle("realtime cluster in separate processes (PostgreSQL only: PGlite cannot be shared between processes)", redisServer),
  () => {
    let db: TestDatabase;
    let cluster: Cluster;
    const clients: TestClient[] = [];
    let betId = 1;
    const write = (count: number, player = A) =>
      insertUpdates(
        db,
        Array.from({ length: count }, () => ({ chainId: 1, betId: String(betId++), player })),
      );

    beforeAll(async () => {
      db = await createTestDatabase();
      await createNetworks(db, [1]);
      cluster = await startCluster({
        databaseUrl: db.url!,
        redisUrl: REDIS_URL,
        prefix: `bets-test:${randomBytes(6).toString("hex")}:`,
        nodes: 2,
        publishers: 1,
        env: { METRICS_PORT: "0" }, // publishers serve /metrics on a port of their own; nodes on theirs
      });
    });
    afterAll(async () => {
      for (const client of clients) client.close();
      await cluster?.stop();
      await db?.close();
    });
    const connect = async (url: string) => {
      const client = await connectClient(url, "/ws");
      clients.push(client);
      return client;
    };

    it("delivers to clients on every node, whichever node they are on, once and in order", async () => {
      const [nodeA, nodeB] = cluster.nodes as [Cluster["nodes"][0], Cluster["nodes"][0]];
      const onA = await connect(nodeA.url);
      const onB = await connect(nodeB.url);
      await onA.subscribe({ all: true, wallets: [A] });
      await onB.subscribe({ wallets: [B] });
      const written = [...(await write(5, A)), ...(await write(3, B))];
      await onA.until(() => onA.updates.length === 8);
      await onB.until(() => onB.updates.length === 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seqs(onA.updates)).toEqual(written);
      expect(seqs(onB.updates)).toEqual(written.slice(5));
      expect(conventionViolations([...onA.updates, ...onB.updates])).toEqual([]);
      for (const update of onA.updates) expect(update.seq).toMatch(/^[1-9][0-9]*$/);

      // Unsubscribe stops delivery; bad payloads leave the socket usable.
      await onB.unsubscribe({});
      const bad = (await (onB.socket as unknown as { emitWithAck(e: string, p: unknown): Promise<unknown> }).emitWithAck("bets:subscribe", {
        wallets: ["0xnope"],
      })) as { error: { code: string } };
      expect(bad.error.code).toBe("BAD_USER_INPUT");
      expect(onB.errors).toMatchObject([{ code: "BAD_USER_INPUT", event: "bets:subscribe" }]);
      await write(2, B);
      await onA.until(() => onA.updates.length === 10);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(onB.updates).toHaveLength(3);
      onA.close();
      onB.close();
    });

    it("publisher failover: the standby takes over when the active one is killed; nothing lost or repeated", async () => {
      const standby = cluster.startPublisher();
      await standby.waitFor("publisher started");
      const [nodeA, nodeB] = cluster.nodes as [Cluster["nodes"][0], Cluster["nodes"][0]];
      const onA = await connect(nodeA.url);
      const onB = await connect(nodeB.url);
      const since = (await onA.subscribe({ all: true })) as { seq: string };
      await onB.subscribe({ wallets: [A] });

      let writing = true;
      const written: bigint[] = [];
      const writer = (async () => {
        while (writing) {
          written.push(...(await write(2, A)));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      await onA.until(() => onA.updates.length >= 20);
      const active = cluster.activePublisher()!;
      expect(active).not.toBe(standby);
      const killedAt = performance.now();
      await active.stop({ signal: "SIGKILL" });
      await standby.waitFor("publisher active", 10_000);
      const takeoverMs = performance.now() - killedAt;
      const before = written.length;
      await onA.until(() => written.length >= before + 20);
      writing = false;
      await writer;
      const expected = written.filter((s) => s > BigInt(since.seq));
      await onA.until(() => onA.updates.length >= expected.length, 10_000, "every update on node A");
      await onB.until(() => onB.updates.length >= expected.length, 10_000, "every update on node B");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seqs(onA.updates)).toEqual(expected);
      expect(seqs(onB.updates)).toEqual(expected);
      expect(takeoverMs).toBeLessThan(5_000);
      onA.close();
      onB.close();
    });

    it("a client whose node is killed resumes on another node with its last seq: every update exactly once, in order", async () => {
      const [nodeA, nodeB] = cluster.nodes as [Cluster["nodes"][0], Cluster["nodes"][0]];
      const client = await connect(nodeA.url);
      const since = (await client.subscribe({ wallets: [A, B] })) as { seq: string };
      let writing = true;
      const written: bigint[] = [];
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          written.push(...(await write(1, i % 2 ? A : B)));
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await client.until(() => client.updates.length >= 25);
      const disconnected = new Promise((resolve) => client.socket.once("disconnect", resolve));
      await nodeA.stop({ signal: "SIGKILL" });
      await disconnected;

      // What a client does: reconnect (the load balancer sends it to a live node) and resume.
      const received = [...client.updates];
      const last = received.at(-1)!.seq;
      const resumed = await connect(nodeB.url);
      const state = await resumed.subscribe({ wallets: [A, B], sinceSeq: last });
      expect(state).toMatchObject({ wallets: [A, B] });
      await resumed.until(() => resumed.updates.length >= 20);
      writing = false;
      await writer;
      const expected = written.filter((s) => s > BigInt(since.seq));
      await resumed.until(() => received.length + resumed.updates.length >= expected.length, 10_000, "every update after the resume");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([...seqs(received), ...seqs(resumed.updates)]).toEqual(expected);
    });

    it("serves Prometheus metrics from a real node and the active publisher", async () => {
      const node = cluster.nodes.find((n) => n.running())!;
      const publisher = cluster.activePublisher()!;
      const publisherMetrics = `${String((await publisher.waitFor("publisher metrics listening")).url)}`;
      const client = await connect(node.url);
      await client.subscribe({ all: true, wallets: [A, B], chainIds: [1] });
      const before = await scrape(`${node.url}/metrics`);
      const written = await write(5, A);
      await client.until(() => client.updates.length === 5);

      const after = await scrape(`${node.url}/metrics`);
      expect(after.realtime_updates_delivered_total! - before.realtime_updates_delivered_total!).toBeGreaterThanOrEqual(5);
      expect(after.realtime_connected_sockets).toBeGreaterThanOrEqual(1);
      expect(after.realtime_subscriptions! - before.realtime_subscriptions!).toBe(0); // unchanged by deliveries
      expect(after.realtime_subscriptions).toBeGreaterThanOrEqual(4); // all + 2 wallets + 1 chain on this socket
      expect(after.realtime_last_seq).toBe(Number(written.at(-1)));
      expect(after.realtime_redis_connected).toBe(1);
      expect(after.realtime_local_delivery).toBe(0);
      expect(after.process_cpu_seconds_total).toBeGreaterThan(0);
      client.close();
      await eventually(
        async () => (await scrape(`${node.url}/metrics`)).realtime_subscriptions === after.realtime_subscriptions! - 4,
        10_000,
        "subscriptions gone with the socket",
      );

      await eventually(
        async () => {
          const p = await scrape(publisherMetrics);
          return p.publisher_active === 1 && p.publisher_lag_updates === 0 && p.publisher_published_seq === Number(written.at(-1));
        },
        10_000,
        "the publisher caught up",
      );
      const p = await scrape(publisherMetrics);
      expect(p.publisher_messages_sent_total).toBeGreaterThan(0);
      expect(p.publisher_messages_dropped_total).toBe(0);
      expect(p.publisher_redis_connected).toBe(1);
    });
  },
);
