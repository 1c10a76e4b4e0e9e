// What a deep `sinceSeq` replay may cost a node: sent only while the socket takes it (the node never
// queues more than the replay watermark for it, and cuts a socket that stays stalled past the
// deadline), and charged to the client address's replay budget (the pages it will read up front,
// up to a bound, then page by page), so that a reconnect loop cannot restart the same deep replay
// for free, nor for the price of the one page it let through before it left. Real node, real sockets, real outbox.
import http from "node:http";
import type { Socket as NetSocket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pointsStore, REALTIME_SECTIONS, replayBudget } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { silentLogger } from "../core/logger.ts";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, type TestClient, type TypedClientSocket } from "../test/realtime.ts";
import { bufferedBytes } from "./backpressure.ts";
import { REPLAY_WATERMARK_BYTES } from "./connection.ts";
import { isErrorResponse } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createNodeMetrics } from "./metrics.ts";
import { createRealtime, type Realtime, type RealtimeDeps } from "./server.ts";

const PATH = "/ws";
const PAGE = 100;
const logger = silentLogger();
let db: TestDatabase;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createNetworks(db, [1]);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await db?.close();
});

async function startNode(deps: Partial<RealtimeDeps>): Promise<{ url: string; realtime: Realtime }> {
  const server = http.createServer();
  const realtime = await createRealtime(server, {
    db,
    logger,
    fanout: createMemoryFanout(),
    path: PATH,
    pageSize: PAGE,
    replayPageSize: PAGE,
    // Heartbeats far apart: a stalled client must be cut by the replay's deadline, not a ping timeout.
    pingIntervalMs: 120_000,
    pingTimeoutMs: 60_000,
    // Crowds of firehose replays from one address: the lane is under test, not the firehose share.
    firehose: { maxPerAddress: 0 },
    ...deps,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await realtime.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, realtime };
}

async function client(url: string, localAddress?: string): Promise<TestClient> {
  const connected = await connectClient(url, PATH, localAddress ? { localAddress } : {});
  cleanups.push(async () => connected.close());
  return connected;
}

/** The TCP socket under a socket.io-client's WebSocket transport (engine.io-client + ws internals). */
function tcpSocketOf(socket: TypedClientSocket): NetSocket {
  const transport = socket.io.engine.transport as unknown as { ws?: { _socket?: NetSocket } };
  const tcp = transport.ws?._socket;
  if (!tcp) throw new Error("no TCP socket under the client's WebSocket");
  return tcp;
}

describe("a replay to a socket that stops reading", () => {
  it("never queues more than the watermark for it, and cuts it once it has been stalled past the deadline", async () => {
    // ~24 MB of history: far more than loopback's kernel buffers take, so the node must hold back.
    const FILLER = 16 * 1024;
    for (let first = 1; first <= 1_500; first += 250) {
      await insertUpdates(
        db,
        Array.from({ length: 250 }, (_, i) => ({ chainId: 1, betId: String(first + i), player: wallet(i % 3), fillerChars: FILLER })),
      );
    }
    const node = await startNode({ replayDrainTimeoutMs: 1_000 });
    const stalled = await client(node.url);
    tcpSocketOf(stalled.socket).pause();
    stalled.socket.emit("bets:subscribe", { all: true, sinceSeq: "0" });

    // What the node queues for its sockets, sampled until the stalled one is gone.
    let most = 0;
    const sampler = setInterval(() => {
      for (const socket of node.realtime.io.of("/").sockets.values()) most = Math.max(most, bufferedBytes(socket));
    }, 2);
    cleanups.push(async () => clearInterval(sampler));
    await eventually(() => node.realtime.state().sockets === 0, 60_000, "the stalled socket to be cut");
    clearInterval(sampler);

    // The watermark, plus the one update that crossed it (its JSON: the filler and the bet's fields).
    expect(most).toBeLessThanOrEqual(REPLAY_WATERMARK_BYTES + FILLER + 2_048);
    expect(node.realtime.replayStalls()).toBe(1);
    expect(node.realtime.slowConsumerDisconnects()).toBe(0);
  });
});

describe("a replay to a socket that reads", () => {
  it("hands the kernel many frames a write: its updates leave in far fewer socket writes than updates", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: 3 * PAGE }, (_, i) => ({ chainId: 1, betId: String(950_000 + i), player: wallet(i % 3) })),
    );
    const node = await startNode({});
    const reading = await client(node.url);
    // The node's TCP socket under this client's WebSocket (engine.io and ws internals: backpressure.ts).
    const [socket] = node.realtime.io.of("/").sockets.values();
    const transport = socket!.conn.transport as unknown as { socket?: { _socket?: NetSocket } };
    const tcp = transport.socket?._socket;
    if (!tcp) throw new Error("no TCP socket under the node's WebSocket");
    const counted = tcp as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
    let writes = 0;
    for (const method of ["_write", "_writev"] as const) {
      const original = counted[method].bind(tcp);
      counted[method] = (...args: unknown[]) => {
        writes++;
        return original(...args);
      };
    }
    const answer = await reading.subscribe({ all: true, sinceSeq: String(written[0]! - 1n) });
    expect(isErrorResponse(answer)).toBe(false);
    expect(reading.updates).toHaveLength(written.length);
    // One write a flush of engine.io's buffer (a page, or what queued while the last write ran), not one a frame.
    expect(writes).toBeLessThan(written.length / 10);
  });
});

describe("the replay budget", () => {
  it("charges each page to the client address: a reconnect loop replaying the same history is refused RATE_LIMITED with a retry hint; another address is not", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: 5 * PAGE }, (_, i) => ({ chainId: 1, betId: String(100_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    // Eight pages per client address and hour; the clock stands still (no refill during the test).
    const store = createMemoryRateLimitStore({ capacity: 8, refillPerSecond: 8 / 3_600 });
    const node = await startNode({ replayBudget: { take: (key, _now, cost) => store.take(key, 0, cost) } });

    const first = await client(node.url);
    const replayed = await first.subscribe({ all: true, sinceSeq: since });
    expect(isErrorResponse(replayed)).toBe(false);
    expect(first.updates).toHaveLength(written.length);
    first.close();

    // The client reconnects and asks for the same history again: what is left cannot pay for it.
    const again = await client(node.url);
    const refused = await again.subscribe({ all: true, sinceSeq: since });
    expect(isErrorResponse(refused) ? refused.error : refused).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: expect.any(Number) });
    expect(isErrorResponse(refused) && refused.error.retryAfterSeconds! > 0).toBe(true);
    expect(again.updates.length).toBeLessThan(written.length);
    const third = await again.subscribe({ all: true, sinceSeq: since });
    expect(isErrorResponse(third) ? third.error.code : third).toBe("RATE_LIMITED");
    expect(node.realtime.replayRefusals()).toBe(2);
    const metrics = createNodeMetrics(node.realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
    expect((await metrics.registry.getSingleMetric("realtime_replay_refusals_total")!.get()).values[0]!.value).toBe(2);

    // Subscribing without a replay costs nothing; another client address has its own budget.
    expect(isErrorResponse(await again.subscribe({ all: true }))).toBe(false);
    const other = await client(node.url, "127.0.0.2");
    expect(isErrorResponse(await other.subscribe({ all: true, sinceSeq: since }))).toBe(false);
    await eventually(() => other.updates.length === written.length, 10_000, "the other address's whole replay");
  });
});

describe("a reconnect loop replaying deep history", () => {
  it("pays for the replay's pages up front: leaving after the first page does not make the next replay cheap, and the fourth is refused", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: 20 * PAGE }, (_, i) => ({ chainId: 1, betId: String(500_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    // Every page read waits until the test ends: each replay has begun, and its client leaves.
    const held = heldReplayReads(db);
    cleanups.push(async () => held.release());
    // Thirty pages per client address; the clock stands still (no refill during the test).
    const store = createMemoryRateLimitStore({ capacity: 30, refillPerSecond: 30 / 3_600 });
    const node = await startNode({
      db: held.db,
      replayBudget: { take: (key, _now, pages) => store.take(key, 0, pages) },
      replayPrepaidPages: 10,
    });

    const refusedAt: number[] = [];
    for (let reconnect = 1; reconnect <= 4; reconnect++) {
      const looping = await client(node.url);
      const reads = held.reads.started;
      let answered: Awaited<ReturnType<TestClient["subscribe"]>> | undefined;
      // The client leaves before its replay ends: the ack never comes, and closing rejects its promise.
      const subscribing = looping.subscribe({ all: true, sinceSeq: since }).then((answer) => (answered = answer));
      subscribing.catch(() => undefined);
      await eventually(() => answered !== undefined || held.reads.started > reads, 10_000, `replay ${reconnect} reading or refused`);
      if (answered !== undefined) {
        expect(isErrorResponse(answered) ? answered.error : answered).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: expect.any(Number) });
        refusedAt.push(reconnect);
      }
      looping.close();
      await eventually(() => node.realtime.state().sockets === 0, 10_000, `replay ${reconnect}'s socket gone`);
    }
    // Three replays of 21 pages paid ten each before reading one; the fourth found nothing left.
    expect(refusedAt).toEqual([4]);
    expect(node.realtime.replayRefusals()).toBe(1);
  });
});

describe("the default replay price", () => {
  it("charges 100 points a page of 100 updates: a new client address (5 000 points) replays 50 pages and is refused at the 51st", async () => {
    // 51 pages of 100 updates. At the old price (100 points a page of 500) the whole replay cost 1 100 points.
    const written = await insertUpdates(
      db,
      Array.from({ length: 5_100 }, (_, i) => ({ chainId: 1, betId: String(900_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    // The defaults as bin/realtime.ts wires them (5 000 points to start), on a clock that stands still.
    const config = loadConfig(["shared", ...REALTIME_SECTIONS], {});
    const budget = replayBudget(config, pointsStore(config))!;
    const node = await startNode({
      replayBudget: { take: (key, _now, pages) => budget.take(key, 1_000, pages) },
      replayPrepaidPages: config.REALTIME_REPLAY_PREPAID_PAGES,
      replayPageSize: undefined,
    });

    const resuming = await client(node.url);
    const answer = await resuming.subscribe({ all: true, sinceSeq: since });
    expect(isErrorResponse(answer) ? answer.error : answer).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: expect.any(Number) });
    expect(resuming.updates).toHaveLength(5_000);
    expect(resuming.updates.map((update) => BigInt(update.seq))).toEqual(written.slice(0, 5_000));
  }, 60_000);
});

describe("a replay that completes", () => {
  it("is settled with the pages it read: a wallet's resume over a deep range that holds one of its updates pays one page, not the range", async () => {
    const others = await insertUpdates(
      db,
      Array.from({ length: 5 * PAGE }, (_, i) => ({ chainId: 1, betId: String(700_000 + i), player: wallet(i % 3) })),
    );
    const [own] = await insertUpdates(db, [{ chainId: 1, betId: "800000", player: wallet(7) }]);
    const since = String(others[0]! - 1n);
    // Twenty pages per client address; the clock stands still (no refill during the test).
    const store = createMemoryRateLimitStore({ capacity: 20, refillPerSecond: 20 / 3_600 });
    const keys = new Set<string>();
    const node = await startNode({
      replayBudget: {
        take: (key, _now, pages) => {
          keys.add(key);
          return store.take(key, 0, pages);
        },
        refund: async (key, _now, pages) => {
          await store.settle(key, 0, -pages);
        },
      },
      replayPrepaidPages: 10,
    });

    const resuming = await client(node.url);
    const answer = await resuming.subscribe({ wallets: [wallet(7)], sinceSeq: since });
    expect(isErrorResponse(answer)).toBe(false);
    expect(resuming.updates.map((update) => BigInt(update.seq))).toEqual([own]);
    // The range (501 updates) may hold six pages and the replay paid them up front; it read one.
    expect([...keys]).toHaveLength(1);
    await eventually(async () => (await store.take([...keys][0]!, 0, 0)).remaining === 19, 5_000, "the unread pages given back");
  });
});

/**
 * The node's database, with every outbox page read (Outbox.after: `SELECT "seq"::text ... FROM
 * "BetUpdate"` through Database.read) counted and held until `release`. No publisher runs beside
 * these nodes, so the only page reads are replays'.
 */
function heldReplayReads(database: TestDatabase) {
  let open: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (open = resolve));
  const reads = { inFlight: 0, most: 0, started: 0 };
  const read: TestDatabase["read"] = async (statement, values) => {
    if (!/SELECT "seq"::text .* FROM "BetUpdate"/s.test(statement.text)) return database.read(statement, values);
    reads.started++;
    reads.inFlight++;
    reads.most = Math.max(reads.most, reads.inFlight);
    try {
      await released;
      return await database.read(statement, values);
    } finally {
      reads.inFlight--;
    }
  };
  const counted = new Proxy(database, {
    get: (target, property) => (property === "read" ? read : Reflect.get(target, property, target)),
  });
  return { db: counted, reads, release: () => open() };
}

describe("the replay lane", () => {
  it("reads at most the per-client cap of one address's replay pages at once, queues the rest, and lets another address's replay through", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: 3 * PAGE }, (_, i) => ({ chainId: 1, betId: String(200_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    const held = heldReplayReads(db);
    const node = await startNode({ db: held.db, replayLane: { concurrency: 3, perClient: 2, queueTimeoutMs: 60_000 } });

    const crowd = await Promise.all(Array.from({ length: 6 }, () => client(node.url)));
    const answers = crowd.map((member) => member.subscribe({ all: true, sinceSeq: since }));
    cleanups.push(async () => held.release());
    // Every replay of the crowd has reached the lane: two read, four wait.
    await eventually(() => held.reads.inFlight + (node.realtime.replayLane()?.waiting ?? 0) === 6, 10_000, "the crowd's replays at the lane");
    expect(held.reads.inFlight).toBe(2);
    expect(node.realtime.replayLane()).toMatchObject({ running: 2, waiting: 4, refused: 0 });

    // Another address is not behind the crowd: its first page is read while the crowd's wait.
    const other = await client(node.url, "127.0.0.2");
    const otherAnswer = other.subscribe({ all: true, sinceSeq: since });
    await eventually(() => held.reads.inFlight === 3, 10_000, "the other address's page read");
    expect(node.realtime.replayLane()).toMatchObject({ running: 3, waiting: 4 });

    held.release();
    for (const answer of [...answers, otherAnswer]) expect(isErrorResponse(await answer)).toBe(false);
    for (const member of [...crowd, other]) expect(member.updates).toHaveLength(written.length);
    expect(held.reads.most).toBe(3);
    // Four pages each (the last one short), seven replays, each read once.
    expect(held.reads.started).toBe(7 * 4);
  });

  it("refuses a replay that waited past the queue's deadline, or found its address's share of the queue full, with a retry hint", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: PAGE }, (_, i) => ({ chainId: 1, betId: String(300_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    const held = heldReplayReads(db);
    const node = await startNode({ db: held.db, replayLane: { concurrency: 1, perClient: 1, queueTimeoutMs: 500 } });

    // One reads (held), eight wait (the most one address may), the tenth is refused at once; the
    // eight are refused once the deadline passes, since the read never finishes meanwhile.
    const crowd = await Promise.all(Array.from({ length: 10 }, () => client(node.url)));
    const answers = crowd.map((member) => member.subscribe({ all: true, sinceSeq: since }));
    cleanups.push(async () => held.release());
    await eventually(() => node.realtime.replayLane()?.refused === 9, 10_000, "nine refusals");
    held.release();
    const settled = await Promise.all(answers);
    const refused = settled.filter(isErrorResponse);
    expect(refused).toHaveLength(9);
    for (const { error } of refused) {
      expect(error).toMatchObject({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 1 });
      expect(error.message).toMatch(/replay/);
    }
    expect(crowd.filter((member) => member.updates.length === written.length)).toHaveLength(1);
    const metrics = createNodeMetrics(node.realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
    expect((await metrics.registry.getSingleMetric("realtime_replay_lane_refused_total")!.get()).values[0]!.value).toBe(9);
  });

  it("charges a replay page only once the lane admits its read: the refused replays have paid nothing", async () => {
    const written = await insertUpdates(
      db,
      Array.from({ length: PAGE }, (_, i) => ({ chainId: 1, betId: String(400_000 + i), player: wallet(i % 3) })),
    );
    const since = String(written[0]! - 1n);
    const held = heldReplayReads(db);
    const store = createMemoryRateLimitStore({ capacity: 1_000, refillPerSecond: 1_000 / 3_600 });
    let charged = 0;
    const replayBudget = {
      take: (key: string, _now: number, pages = 1) => {
        charged += pages;
        return store.take(key, 0, pages);
      },
    };
    const node = await startNode({ db: held.db, replayBudget, replayLane: { concurrency: 1, perClient: 1, queueTimeoutMs: 500 } });

    const crowd = await Promise.all(Array.from({ length: 10 }, () => client(node.url)));
    const answers = crowd.map((member) => member.subscribe({ all: true, sinceSeq: since }));
    cleanups.push(async () => held.release());
    await eventually(() => node.realtime.replayLane()?.refused === 9, 10_000, "nine refusals");
    held.release();
    expect((await Promise.all(answers)).filter(isErrorResponse)).toHaveLength(9);
    // The one admitted replay: a full page, then the empty page that ends it (paid up front).
    expect(charged).toBe(2);
  });
});
