// Slow consumers. A socket that stops reading (TCP backpressure) makes the node queue every update
// meant for it: engine.io's write buffer (packets its transport cannot take yet) and the WebSocket's
// own buffer (bytes not yet handed to the kernel). Unbounded, one hostile client subscribed to the
// firehose could exhaust the node's memory. A sweep over the node's sockets adds the two up and
// closes the connection of a socket over the bound at the transport level (no Socket.IO disconnect
// packet): a stock client reconnects by itself and resumes with `sinceSeq`, losing nothing.
// Nothing on the delivery path pays for it; a socket may pass the bound by one sweep's worth.
import type { Logger } from "../core/logger.ts";
import type { RealtimeServer, RealtimeSocket } from "./fanout.ts";

/** engine.io 6.6 internals (private in its types); slow-consumer.db.test.ts fails if they move. */
interface EngineConnection {
  writeBuffer?: { data?: unknown }[];
  /**
   * `socket` is the `ws` WebSocket of the websocket transport (long-polling has none); its
   * `_socket` the TCP socket under it (ws internals; replay-limits.db.test.ts fails if it moves).
   */
  transport: { socket?: { bufferedAmount?: number; terminate?: () => void; _socket?: { cork(): void; uncork(): void } } };
}

const engineConnection = (socket: RealtimeSocket) => socket.conn as unknown as EngineConnection;

/**
 * Bytes queued for `socket` (string packets counted in characters: JSON, nearly all ASCII). Stops
 * counting once past `stopAbove`: the sweep only needs to know that.
 */
export function bufferedBytes(socket: RealtimeSocket, stopAbove = Number.POSITIVE_INFINITY): number {
  const conn = engineConnection(socket);
  let bytes = conn.transport.socket?.bufferedAmount ?? 0;
  for (const packet of conn.writeBuffer ?? []) {
    if (bytes > stopAbove) break;
    bytes += packetBytes(packet);
  }
  return bytes;
}

const packetBytes = (packet: { data?: unknown }) => {
  const data = packet.data;
  return typeof data === "string" ? data.length : Buffer.isBuffer(data) ? data.byteLength : 0;
};

/**
 * bufferedBytes() for a sender asking after each packet it queues (a replay): each queued packet
 * is counted once, not at every call. engine.io replaces its write buffer when it flushes it, so a
 * buffer other than the one counted (or shorter) is counted afresh.
 */
export class QueuedBytes {
  private buffer: unknown[] | undefined;
  private counted = 0;
  private bytes = 0;

  private readonly socket: RealtimeSocket;
  constructor(socket: RealtimeSocket) {
    this.socket = socket;
  }

  now(): number {
    const conn = engineConnection(this.socket);
    const buffer = conn.writeBuffer ?? [];
    if (buffer !== this.buffer || buffer.length < this.counted) {
      this.buffer = buffer;
      this.counted = 0;
      this.bytes = 0;
    }
    for (; this.counted < buffer.length; this.counted++) this.bytes += packetBytes(buffer[this.counted]!);
    return this.bytes + (conn.transport.socket?.bufferedAmount ?? 0);
  }
}

/**
 * Closes a socket's connection at the transport level: socket.io-client reconnects by itself
 * (reason `transport close`; after a Socket.IO disconnect it would not). By default engine.io first
 * writes out what is queued (draining: a reading client gets it); `discardQueued` drops it and the
 * TCP connection at once (a client that does not read would never take it).
 */
export function closeTransport(socket: RealtimeSocket, options: { discardQueued?: boolean } = {}): void {
  if (!options.discardQueued) return void socket.conn.close();
  socket.conn.close(true);
  // Otherwise ws keeps its buffer until its closing handshake times out (30 s).
  engineConnection(socket).transport.socket?.terminate?.();
}

/**
 * Each flush of a connection's write buffer reaches the kernel in one write. engine.io hands the
 * WebSocket every packet queued since its last write at once (a replay page, a feed message's
 * updates), and `ws` writes each frame with a system call of its own: a third of a replay's CPU
 * (bench/replay-cost.ts). The TCP socket is corked from engine.io's `flush` to its `drain` (both
 * emitted synchronously around the transport's send), so the frames leave in one writev; nothing
 * is held past the flush. Long-polling (no TCP socket of its own) is left as it is.
 */
export function coalesceWrites(io: RealtimeServer): void {
  // Per connection: a flush that ran without a TCP socket has nothing to uncork.
  const corked = new Map<unknown, { uncork(): void }>();
  io.engine.on("flush", (conn: unknown) => {
    const tcp = (conn as EngineConnection).transport.socket?._socket;
    if (!tcp) return;
    tcp.cork();
    corked.set(conn, tcp);
  });
  io.engine.on("drain", (conn: unknown) => {
    corked.get(conn)?.uncork();
    corked.delete(conn);
  });
}

/**
 * Resolves true once at most `belowBytes` are queued for `socket`, false when it is still above
 * after `timeoutMs` or has disconnected. Woken by the transport finishing a write (its "drain"),
 * and checked every 100 ms besides (a write the kernel takes leaves no event on engine.io).
 */
export async function waitForRoom(socket: RealtimeSocket, options: { belowBytes: number; timeoutMs: number }): Promise<boolean> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    if (!socket.connected) return false;
    if (bufferedBytes(socket, options.belowBytes) <= options.belowBytes) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    const transport = socket.conn.transport;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        transport.off("drain", done);
        socket.conn.off("close", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(100, left));
      transport.on("drain", done);
      socket.conn.on("close", done);
    });
  }
}

export interface SlowConsumerWatch {
  /** Connections closed for being over the bound, since start. */
  disconnected(): number;
  stop(): void;
}

/** Every `intervalMs`: closes the connection of each socket with more than `maxBytes` queued (0: never). */
export function watchSlowConsumers(io: RealtimeServer, options: { maxBytes: number; intervalMs: number; logger: Logger }): SlowConsumerWatch {
  let disconnected = 0;
  if (options.maxBytes <= 0) return { disconnected: () => 0, stop: () => undefined };
  // A closed socket may still be listed until its disconnect: count and log it once.
  const closed = new WeakSet<RealtimeSocket>();
  const timer = setInterval(() => {
    for (const socket of io.of("/").sockets.values()) {
      if (closed.has(socket)) continue;
      const bytes = bufferedBytes(socket, options.maxBytes);
      if (bytes <= options.maxBytes) continue;
      closed.add(socket);
      disconnected++;
      options.logger.warn(
        { socket: socket.id, transport: socket.conn.transport.name, bufferedBytes: bytes, maxBufferedBytes: options.maxBytes },
        "closing a slow consumer's connection",
      );
      closeTransport(socket, { discardQueued: true });
    }
  }, options.intervalMs);
  timer.unref();
  return { disconnected: () => disconnected, stop: () => clearInterval(timer) };
}
