// The client package's bet feed against real realtime nodes: resume by `sinceSeq` after the
// connection drops (same node, and a killed node in a two-process cluster with Redis and a
// publisher), the backlog, REPLAY_WINDOW_EXCEEDED, and the client's own dedupe and URL failover
// against a scripted Socket.IO server that repeats itself.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { Socket as NetSocket } from "node:net";
import { Server } from "socket.io";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import type { ClientToServerEvents, ServerToClientEvents } from "../realtime/events.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { createNetworks, fakeBet, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, startCluster, type Cluster } from "../test/realtime.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { openBetsFeed, type BetsFeed, type BetsFeedOptions, type BetUpdatePayload, type FeedStatus, type UpdateMeta } from "./realtime.ts";
import { testConfig, testRealtimeSettings } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

const REDIS_URL = testConfig.TEST_REDIS_URL;
const onPostgres = testConfig.TEST_DB === "postgres";
const A = wallet(1);
const B = wallet(2);
const REPLAY_MAX_UPDATES = 50;

interface Received {
  update: BetUpdatePayload;
  meta: UpdateMeta;
}

const feeds: BetsFeed[] = [];
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
});

/** A feed recording what it delivers, its statuses and resyncs. */
function follow(options: Omit<BetsFeedOptions, "onUpdate" | "onStatus" | "onResync">) {
  const received: Received[] = [];
  const statuses: FeedStatus[] = [];
  const resyncs: { seq: string; code: string }[] = [];
  const feed = openBetsFeed({
    reconnectDelayMs: { min: 50, max: 500 },
    ...options,
    onUpdate: (update, meta) => received.push({ update, meta }),
    onStatus: (status) => statuses.push(status),
    onResync: (info) => void resyncs.push(info),
  });
  feeds.push(feed);
  return { feed, received, statuses, resyncs, seqs: () => received.map((r) => BigInt(r.update.seq)) };
}

const until = (predicate: () => boolean, what: string, timeoutMs = 20_000) => eventually(predicate, timeoutMs, what, 20);

/** Resolves once the node at `url` has delivered everything up to `seq` (its position, from an empty unsubscribe). */
async function nodeHas(url: string, seq: bigint): Promise<void> {
  const probe = await connectClient(url, "/ws");
  try {
    await eventually(
      async () => {
        const state = await probe.unsubscribe({});
        return !("error" in state) && BigInt(state.seq) >= seq;
      },
      20_000,
      `the node to have delivered seq ${seq}`,
      20,
    );
  } finally {
    probe.close();
  }
}

/** Writes one update at a time (alternating players) until stopped; returns every seq written. */
function startWriter(db: TestDatabase, players: string[], firstBetId: number) {
  let writing = true;
  let betId = firstBetId;
  const written: { seq: bigint; player: string }[] = [];
  const done = (async () => {
    for (let i = 0; writing; i++) {
      const player = players[i % players.length]!;
      const [seq] = await insertUpdates(db, [{ chainId: 1, betId: String(betId++), player }]);
      written.push({ seq: seq!, player });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    written,
    async stop() {
      writing = false;
      await done;
    },
  };
}

describe("bet feed on an in-process realtime node", () => {
  let db: TestDatabase;
  let server: http.Server;
  let running: RunningRealtime;
  let url: string;
  const sockets = new Set<NetSocket>();
  let betId = 1;

  beforeAll(async () => {
    db = await createTestDatabase();
    await createNetworks(db, [1]);
    server = http.createServer();
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    running = await startRealtime(server, {
      db,
      logger: silentLogger(),
      settings: testRealtimeSettings({ REALTIME_PATH: "/ws", REALTIME_POLL_INTERVAL_MS: "200", REALTIME_REPLAY_MAX_UPDATES: String(REPLAY_MAX_UPDATES) }),
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await running?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
    await db?.close();
  });

  it("resumes by sinceSeq after its connection drops: each of the wallet's updates once, in order", async () => {
    const { feed, received, seqs, statuses } = follow({ urls: [url], path: "/ws", subscription: { wallets: [A] } });
    await until(() => statuses.some((s) => s.state === "live"), "the feed to go live");
    const start = BigInt(feed.lastSeq!);
    const writer = startWriter(db, [A, B], betId);
    await until(() => received.length >= 10, "10 updates before the drop");
    for (const socket of sockets) socket.destroy(); // the connection dies under the client
    const before = received.length;
    await until(() => feed.stats.reconnects >= 1 && received.length >= before + 10, "10 updates after the resume");
    await writer.stop();
    betId += writer.written.length;
    const expected = writer.written.filter((w) => w.player === A && w.seq > start).map((w) => w.seq);
    await until(() => received.length >= expected.length, "every update of the wallet");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seqs()).toEqual(expected);
    expect(received.every((r) => r.update.bet.player === A)).toBe(true);
    expect(feed.lastSeq).toBe(String(expected.at(-1)));
  });

  it("starts with a backlog (replayed), then goes live", async () => {
    const backlog = await insertUpdates(
      db,
      Array.from({ length: 30 }, () => ({ chainId: 1, betId: String(betId++), player: B })),
    );
    // The feed counts its backlog back from the node's position: the node must have the rows first.
    await nodeHas(url, backlog.at(-1)!);
    const { received, statuses } = follow({ urls: [url], path: "/ws", subscription: { all: true }, backlog: 10 });
    await until(() => statuses.some((s) => s.state === "live"), "the feed to go live");
    const live = await insertUpdates(
      db,
      Array.from({ length: 5 }, () => ({ chainId: 1, betId: String(betId++), player: A })),
    );
    await until(() => received.length >= 15, "backlog and live updates");
    expect(received.map((r) => BigInt(r.update.seq))).toEqual([...backlog.slice(-10), ...live]);
    expect(received.map((r) => r.meta.replayed)).toEqual([...Array<boolean>(10).fill(true), ...Array<boolean>(5).fill(false)]);
  });

  it("REPLAY_WINDOW_EXCEEDED: goes live and asks the app to re-read (onResync), replaying nothing", async () => {
    const old = await insertUpdates(
      db,
      Array.from({ length: REPLAY_MAX_UPDATES + 10 }, () => ({ chainId: 1, betId: String(betId++), player: A })),
    );
    // The resync names the node's position: the node must have the rows first.
    await nodeHas(url, old.at(-1)!);
    const sinceSeq = String(old[0]! - 1n);
    const { received, resyncs, statuses, feed } = follow({ urls: [url], path: "/ws", subscription: { wallets: [A] }, sinceSeq });
    await until(() => statuses.some((s) => s.state === "live"), "the feed to go live");
    expect(resyncs).toHaveLength(1);
    expect(resyncs[0]!.code).toBe("REPLAY_WINDOW_EXCEEDED");
    expect(BigInt(resyncs[0]!.seq)).toBeGreaterThanOrEqual(old.at(-1)!);
    const live = await insertUpdates(db, [{ chainId: 1, betId: String(betId++), player: A }]);
    await until(() => received.length >= 1, "the live update");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((r) => BigInt(r.update.seq))).toEqual(live);
    expect(feed.stats.delivered).toBe(1);
  });

  it("subscribe / unsubscribe on a live feed change what is delivered; a refused wallet is not kept", async () => {
    const { feed, received, statuses } = follow({ urls: [url], path: "/ws", subscription: { wallets: [A] } });
    await until(() => statuses.some((s) => s.state === "live"), "the feed to go live");
    const state = await feed.subscribe({ wallets: [B.toUpperCase().replace("0X", "0x")] });
    expect(state?.wallets.sort()).toEqual([A, B].sort());
    await feed.unsubscribe({ wallets: [A] });
    await insertUpdates(db, [{ chainId: 1, betId: String(betId++), player: A }]);
    const toB = await insertUpdates(db, [{ chainId: 1, betId: String(betId++), player: B }]);
    await until(() => received.length >= 1, "B's update");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((r) => BigInt(r.update.seq))).toEqual(toB);
    await expect(feed.subscribe({ wallets: ["0xnope"] })).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
  });
});

describe("bet feed against a scripted server that repeats itself", () => {
  it("drops updates it has already delivered and fails over across URLs", async () => {
    // Connection 1 sends seqs 1..5 then drops; any resume replays from two before `sinceSeq`
    // (an at-least-once server). The second URL is a closed port, so the feed must come back to the first.
    const server = http.createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(server, { path: "/ws" });
    const update = (seq: number): BetUpdatePayload => ({
      seq: String(seq),
      type: "PLACED",
      chainId: 1,
      betId: String(seq),
      bet: fakeBet({ chainId: 1, betId: String(seq), player: A }),
    });
    let connections = 0;
    io.on("connection", (socket) => {
      const n = ++connections;
      socket.on("bets:subscribe", (request, ack) => {
        const since = request.sinceSeq === undefined ? 0 : Number(request.sinceSeq);
        const from = Math.max(1, since - 2);
        const to = n === 1 ? 5 : 8;
        for (let seq = from; seq <= to; seq++) socket.emit("bets:update", update(seq));
        ack?.({ wallets: request.wallets ?? [], bets: [], chainIds: [], all: false, seq: String(to) });
        if (n === 1) setTimeout(() => socket.conn.close(), 100);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(dead.address() as { port: number }).port}`;
    await new Promise((resolve) => dead.close(resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const { feed, seqs, statuses } = follow({ urls: [url, deadUrl], path: "/ws", subscription: { wallets: [A] } });
      await until(() => seqs().length >= 8, "seqs 1..8");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seqs()).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
      expect(feed.stats.duplicatesDropped).toBe(3);
      expect(statuses.some((s) => s.url === deadUrl && s.state === "connecting")).toBe(true);
      expect(connections).toBe(2);
    } finally {
      io.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("bet feed request order", () => {
  it("a subscribe made while the connection's resume is being prepared is sent after it, not before", async () => {
    const server = http.createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(server, { path: "/ws" });
    const requests: string[] = [];
    let positionAsked!: () => void;
    const asked = new Promise<void>((resolve) => (positionAsked = resolve));
    io.on("connection", (socket) => {
      const state = (seq: string) => ({ wallets: [], bets: [], chainIds: [], all: true, seq });
      socket.on("bets:unsubscribe", (_request, ack) => {
        positionAsked();
        // The node takes its time to answer: the app's subscribe arrives meanwhile.
        setTimeout(() => ack?.(state("100")), 300);
      });
      socket.on("bets:subscribe", (request, ack) => {
        requests.push(request.sinceSeq === undefined ? `subscribe ${JSON.stringify(request.wallets)}` : `resume from ${request.sinceSeq}`);
        ack?.(state("100"));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const { feed } = follow({ urls: [url], path: "/ws", subscription: { all: true }, backlog: 10 });
      await asked;
      await feed.subscribe({ wallets: [A] });
      expect(requests).toEqual(["resume from 90", `subscribe ${JSON.stringify([A])}`]);
    } finally {
      io.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

const redisServer = await redisService(REDIS_URL);
const clusterTitle = "bet feed across a killed realtime node (two node processes, Redis, a publisher; PostgreSQL only)";
describe.skipIf(!onPostgres || skipWithout(redisServer))(serviceTitle(clusterTitle, redisServer), () => {
  let db: TestDatabase;
  let cluster: Cluster;

  beforeAll(async () => {
    db = await createTestDatabase();
    await createNetworks(db, [1]);
    cluster = await startCluster({
      databaseUrl: db.url!,
      redisUrl: REDIS_URL,
      prefix: `bets-test:${randomBytes(6).toString("hex")}:`,
      nodes: 2,
      publishers: 1,
    });
  });
  afterAll(async () => {
    await cluster?.stop();
    await db?.close();
  });

  it("follows a wallet across the kill: fails over to the other URL, no missed and no duplicated update, in order", async () => {
    const [nodeA, nodeB] = cluster.nodes as [Cluster["nodes"][0], Cluster["nodes"][0]];
    const { feed, received, seqs, statuses } = follow({ urls: [nodeA.url, nodeB.url], path: "/ws", subscription: { wallets: [A] } });
    await until(() => statuses.some((s) => s.state === "live"), "the feed to go live on node A");
    expect(statuses.at(-1)!.url).toBe(nodeA.url);
    const start = BigInt(feed.lastSeq!);
    const writer = startWriter(db, [A, B], 1);
    await until(() => received.length >= 15, "15 updates on node A", 30_000);
    await nodeA.stop({ signal: "SIGKILL" });
    const before = received.length;
    await until(() => received.length >= before + 15, "15 updates after failing over", 30_000);
    await writer.stop();
    const expected = writer.written.filter((w) => w.player === A && w.seq > start).map((w) => w.seq);
    await until(() => received.length >= expected.length, "every update of the wallet", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(seqs()).toEqual(expected); // none missed, none repeated, in seq order
    expect(new Set(seqs()).size).toBe(seqs().length);
    // ... and none repeated by the servers either: the client's own dedup had nothing to drop.
    expect(feed.stats.duplicatesDropped).toBe(0);
    expect(feed.stats.reconnects).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s.state === "live").at(-1)!.url).toBe(nodeB.url);
    expect(received.slice(before).some((r) => r.meta.replayed)).toBe(true);
  });
});
