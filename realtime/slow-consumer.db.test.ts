// A client subscribed to the firehose that stops reading its socket (its TCP socket paused: the
// kernel buffers fill, then the node queues) is disconnected once it has more than
// `maxBufferedBytes` queued — at the transport level, so the stock socket.io-client reconnects by
// itself when it reads again and resumes with its last seq, losing nothing — while a well-behaved
// client on the same node receives every update exactly once, in order. Real node, real sockets.
import http from "node:http";
import type { Socket as NetSocket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import type { SubscribedPayload } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createLocalLock } from "./lock.ts";
import { createNodeMetrics } from "./metrics.ts";
import { createPublisher, type Publisher } from "./publisher.ts";
import { createRealtime, type Realtime } from "./server.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, resumingClient, seqs, type TestClient, type TypedClientSocket } from "../test/realtime.ts";

const PATH = "/ws";
const MAX_BUFFERED_BYTES = 64 * 1024;
/** ~32 KB per update: a few hundred fill the loopback kernel buffers and pass the bound quickly. */
const FILLER_CHARS = 32 * 1024;
const BATCH = 20;
/** Far beyond kernel buffers plus the bound (~40 MB): reached only if the node never disconnects. */
const MAX_UPDATES = 1_200;

let db: TestDatabase;
let server: http.Server;
let realtime: Realtime;
let publisher: Publisher;
let url: string;
const warnings: Record<string, unknown>[] = [];
const sockets: TypedClientSocket[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createNetworks(db, [1]);
  const logger = createLogger({ level: "warn", destination: { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) } });
  const fanout = createMemoryFanout();
  server = http.createServer();
  realtime = await createRealtime(server, {
    db,
    logger,
    fanout,
    path: PATH,
    limits: { maxBufferedBytes: MAX_BUFFERED_BYTES },
    slowConsumerCheckMs: 50,
    // Heartbeats far apart: the stalled client must be closed by the bound, not by a ping timeout.
    pingIntervalMs: 120_000,
    pingTimeoutMs: 60_000,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  publisher = createPublisher({ db, fanout, logger, lock: createLocalLock(), pollIntervalMs: 100, heartbeatMs: 200 });
  publisher.start();
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await publisher?.stop();
  await realtime?.close();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
});

/** The TCP socket under a socket.io-client's WebSocket transport (engine.io-client + ws internals). */
function tcpSocketOf(socket: TypedClientSocket): NetSocket {
  const transport = socket.io.engine.transport as unknown as { ws?: { _socket?: NetSocket } };
  const tcp = transport.ws?._socket;
  if (!tcp) throw new Error("no TCP socket under the client's WebSocket");
  return tcp;
}

describe("a slow consumer's queued bytes are bounded", () => {
  it("a client that stops reading is disconnected past the bound and resumes losslessly; a reading client gets every update once, in order", async () => {
    const good: TestClient = await connectClient(url, PATH);
    sockets.push(good.socket);
    const goodSince = BigInt(((await good.subscribe({ all: true })) as SubscribedPayload).seq);
    const stalled = await resumingClient(url, { path: PATH, reconnectionDelay: 100 });
    sockets.push(stalled.socket);
    const tcp = tcpSocketOf(stalled.socket);
    tcp.pause();

    const written: bigint[] = [];
    for (let betId = 1; realtime.slowConsumerDisconnects() === 0 && written.length < MAX_UPDATES; ) {
      const batch = Array.from({ length: BATCH }, () => ({ chainId: 1, betId: String(betId++), player: wallet(betId % 3), fillerChars: FILLER_CHARS }));
      written.push(...(await insertUpdates(db, batch)));
      // Keep pace with delivery (the reading client must not be the one falling behind).
      await good.until(() => good.updates.length >= written.length - 4 * BATCH, 20_000, "the reading client to keep up");
    }
    await eventually(
      () => realtime.slowConsumerDisconnects() === 1,
      10_000,
      () => `a slow-consumer disconnect after ${written.length} updates`,
    );
    expect(written.length).toBeLessThan(MAX_UPDATES);
    await eventually(() => realtime.state().sockets === 1, 10_000, "the stalled socket to be gone from the node");

    // Logged once, structured, without payloads.
    const logged = warnings.filter((line) => line.msg === "closing a slow consumer's connection");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ transport: "websocket", maxBufferedBytes: MAX_BUFFERED_BYTES });
    expect(logged[0]!.bufferedBytes as number).toBeGreaterThan(MAX_BUFFERED_BYTES);
    expect(JSON.stringify(logged[0])).not.toMatch(/filler|xxxx|"bet"/);
    const metrics = createNodeMetrics(realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
    expect((await metrics.registry.getSingleMetric("realtime_slow_consumer_disconnects_total")!.get()).values[0]!.value).toBe(1);

    // Reading again, the stock client sees a transport-level close, reconnects and resumes from its last seq.
    tcp.resume();
    await eventually(() => stalled.connects === 2, 15_000, "the stalled client's automatic reconnect");
    expect(stalled.disconnectReasons).toHaveLength(1);
    expect(stalled.disconnectReasons[0]).toMatch(/^transport (close|error)$/);
    const more = await insertUpdates(db, [{ chainId: 1, betId: "999999", player: wallet(1) }]);
    written.push(...more);

    const expectedGood = written.filter((seq) => seq > goodSince);
    const expectedStalled = written.filter((seq) => seq > stalled.since);
    await good.until(() => good.updates.length >= expectedGood.length, 20_000, "every update at the reading client");
    await eventually(() => stalled.updates.length >= expectedStalled.length, 20_000, "every update at the resumed client");
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more (no duplicates) arrives
    expect(seqs(good.updates)).toEqual(expectedGood);
    expect(seqs(stalled.updates)).toEqual(expectedStalled);
  });
});
