// What a deep `sinceSeq` replay may cost a node: sent only while the socket takes it (the node never
// queues more than the replay watermark for it, and cuts a socket that stays stalled past the
// deadline), and charged, page by page, to the client address's replay budget, so that a reconnect
// loop cannot restart the same deep replay for free. Real node, real sockets, real outbox.
import http from "node:http";
import type { Socket as NetSocket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
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
    // Heartbeats far apart: a stalled client must be cut by the replay's deadline, not a ping timeout.
    pingIntervalMs: 120_000,
    pingTimeoutMs: 60_000,
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

    // The client reconnects and asks for the same history again: the budget has three pages left.
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
