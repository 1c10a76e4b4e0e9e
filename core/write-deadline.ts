import type { Server } from "node:http";
import type { Socket } from "node:net";
import { Counter, type Registry } from "prom-client";

// Slow readers: a client that stops reading holds its answer's bytes in this process (and, for a
// streamed answer such as a CSV export, the work that produces them) for as long as it likes. Every
// connection of a server with bytes waiting to leave must see some of them leave within the write
// deadline; one that sees none for that long is destroyed: its buffers are freed, and whatever
// writes to it (core/http.ts routes, the CSV export's page loop) sees it close and stops. Progress
// is what is measured (nginx's `send_timeout`), not the whole answer's time: a slow but reading
// client of a large answer is never cut.

/** The write deadline's default (HTTP_WRITE_DEADLINE_MS). */
export const DEFAULT_WRITE_DEADLINE_MS = 30_000;

export const SLOW_READER_METRIC = "http_slow_reader_disconnects_total";

/** The counter of connections cut for not reading, once per registry. */
export function slowReaderCounter(registry: Registry): Counter {
  const existing = registry.getSingleMetric(SLOW_READER_METRIC);
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: SLOW_READER_METRIC,
    help: "Connections destroyed because the client took none of the answer's pending bytes within the write deadline",
    registers: [registry],
  });
}

/**
 * Watches every connection of `server`: one with bytes pending of which none left for `deadlineMs`
 * is destroyed and `onCut` called. One timer per server, checking a quarter of the deadline apart
 * (so a cut comes between 1 and 1.25 deadlines after the last byte left). Returns the stop function.
 */
export function enforceWriteDeadline(server: Server, options: { deadlineMs: number; onCut(): void }): () => void {
  const { deadlineMs } = options;
  if (deadlineMs <= 0) return () => undefined;
  // Per connection: bytes handed to the kernel so far, and since when that number has not moved.
  const sockets = new Map<Socket, { flushed: number; since: number }>();
  const onConnection = (socket: Socket) => {
    sockets.set(socket, { flushed: 0, since: performance.now() });
    socket.once("close", () => sockets.delete(socket));
  };
  server.on("connection", onConnection);
  const timer = setInterval(
    () => {
      const now = performance.now();
      for (const [socket, progress] of sockets) {
        const pending = socket.writableLength;
        // bytesWritten counts what is still buffered here: the difference is what has left.
        const flushed = socket.bytesWritten - pending;
        if (pending === 0 || flushed !== progress.flushed) {
          progress.flushed = flushed;
          progress.since = now;
        } else if (now - progress.since >= deadlineMs) {
          sockets.delete(socket);
          socket.destroy();
          options.onCut();
        }
      }
    },
    Math.max(10, Math.floor(deadlineMs / 4)),
  );
  timer.unref();
  return () => {
    clearInterval(timer);
    server.off("connection", onConnection);
  };
}
