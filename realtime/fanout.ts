// The fan-out seam between the publisher and the realtime nodes, with two implementations and one
// shared test suite (test/realtime-suite.ts, run by memory.db.test.ts and redis.db.test.ts):
//
// - memory: one process (npm start, tests). Socket.IO's in-memory adapter; the feed is a function call.
// - redis:  @socket.io/redis-adapter (Pub/Sub, ioredis). Nodes use it as their adapter; the publisher
//           is a headless Socket.IO server on the same adapter and sends the feed with
//           `serverSideEmit("bets:feed", …)`: one Redis PUBLISH per batch of updates, heard by every
//           node, which then writes to its own sockets by room. (@socket.io/redis-emitter is not
//           installed; the headless server needs nothing else.)
//
// Redis Pub/Sub is at-most-once: a node that misses a feed message notices from the next message's
// `prevSeq` (or the publisher's heartbeat) and reads the gap from the outbox (realtime/stream.ts).
import { createAdapter } from "@socket.io/redis-adapter";
import type { Redis } from "ioredis";
import { Server, type ServerOptions, type Socket } from "socket.io";
import type { Logger } from "../core/logger.ts";
import { closeRedis, createRedisClient, isRedisReady } from "../core/redis.ts";
import type { ClientToServerEvents, FeedMessage, InterServerEvents, ServerToClientEvents } from "./events.ts";

/** Per-socket data the realtime node keeps on `socket.data` (nothing; state lives in connection.ts). */
export type SocketData = Record<string, never>;

export type RealtimeServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

export type RealtimeSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

export type FeedHandler = (message: FeedMessage) => void;

export interface Fanout {
  readonly kind: "memory" | "redis";
  /** The Socket.IO adapter for a new server (undefined: Socket.IO's in-memory adapter). */
  adapter(): ServerOptions["adapter"] | undefined;
  /** Node side: call `handler` with every feed message, in publish order. Returns a function that stops. */
  onFeed(io: RealtimeServer, handler: FeedHandler): () => void;
  /**
   * Publisher side: send one message to every node. Returns false when it could not be sent now
   * (Redis away): the message is dropped, not queued; nodes read what they missed from the outbox.
   */
  publish(message: FeedMessage): boolean;
  /** Whether messages flow between processes now (always true in memory; Redis: every connection ready). */
  connected(): boolean;
  close(): Promise<void>;
}

export function createMemoryFanout(): Fanout {
  const handlers = new Set<FeedHandler>();
  return {
    kind: "memory",
    adapter: () => undefined,
    onFeed(_io, handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    publish(message) {
      for (const handler of handlers) handler(message);
      return true;
    },
    connected: () => true,
    async close() {
      handlers.clear();
    },
  };
}

export interface RedisFanoutOptions {
  url: string;
  /** Prefix of every Redis channel (one per deployment, or per test run). */
  prefix: string;
  logger: Logger;
}

export function createRedisFanout(options: RedisFanoutOptions): Fanout {
  const clients: Redis[] = [];
  let headless: RealtimeServer | undefined;
  let closed = false;

  const client = (role: string): Redis => {
    // Commands wait (queued) while Redis is away instead of failing: the adapter does not handle a
    // rejected PUBLISH. The publisher sends nothing while Redis is away (publish below), so the
    // queue holds at most the adapter's own few commands.
    const redis = createRedisClient(options.url, { logger: options.logger, role: `realtime:${role}`, maxRetriesPerRequest: null });
    redis.on("error", () => failing.add(redis));
    redis.on("ready", () => failing.delete(redis));
    clients.push(redis);
    return redis;
  };
  // Connections that failed since they were last ready. A connection still opening for the first
  // time is not failing: what is sent meanwhile waits the few ms it takes.
  const failing = new Set<Redis>();
  const adapter = () => createAdapter(client("pub"), client("sub"), { key: `${options.prefix}socket.io` });
  // Down: lost (closed, reconnecting) or failed since last ready. Opening for the first time is not down.
  const connected = () =>
    failing.size === 0 && clients.every((c) => isRedisReady(c) || c.status === "connecting" || c.status === "connect" || c.status === "wait");

  return {
    kind: "redis",
    adapter,
    onFeed(io, handler) {
      io.on("bets:feed", handler);
      return () => io.off("bets:feed", handler);
    },
    publish(message) {
      if (closed) return false;
      headless ??= new Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>({ adapter: adapter() });
      // A queued message would reach the nodes late and all at once after an outage, and the queue
      // would grow for as long as it lasts; the nodes read the outbox themselves meanwhile.
      if (failing.size > 0) return false;
      headless.serverSideEmit("bets:feed", message);
      return true;
    },
    connected,
    async close() {
      if (closed) return;
      closed = true;
      // A headless server has no engine: close its adapter, not the server.
      if (headless) await headless.of("/").adapter.close();
      // Bounded: Redis away or hung must not keep a stopping process alive (core/redis.ts closeRedis).
      await Promise.all(clients.map((c) => closeRedis(c)));
    },
  };
}
