import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "./logger.ts";

// One way to open a Redis connection for the services. Redis is never required for serving: while
// it is away, clients keep reconnecting with a capped backoff, and the logs get one line when it
// goes and one when it is back (ioredis emits an "error" per failed attempt: logging each would
// flood the logs for as long as the outage lasts). Messages name the role, never the URL.

/** Reconnect after 100 ms, 200 ms, … up to 2 s between attempts, for ever. */
export function reconnectDelay(attempt: number): number {
  return Math.min(100 * attempt, 2_000);
}

export interface RedisClientOptions {
  logger: Logger;
  /** Shown in logs and as the connection's CLIENT SETNAME. */
  role: string;
  /** ioredis option: null queues commands until Redis is back; a number fails them after that many reconnects. */
  maxRetriesPerRequest?: number | null;
  extra?: Omit<RedisOptions, "retryStrategy" | "maxRetriesPerRequest" | "connectionName">;
}

export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const redis = new Redis(url, {
    ...options.extra,
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 1 : options.maxRetriesPerRequest,
    connectionName: options.role,
    retryStrategy: reconnectDelay,
  });
  let down = false;
  redis.on("error", (error: Error) => {
    if (down) return;
    down = true;
    // `code` (ECONNREFUSED, ETIMEDOUT…) says what kind of failure; the message may carry host:port.
    options.logger.warn({ role: options.role, code: (error as NodeJS.ErrnoException).code ?? "error" }, "redis unavailable");
  });
  redis.on("ready", () => {
    if (!down) return;
    down = false;
    options.logger.info({ role: options.role }, "redis reconnected");
  });
  return redis;
}

/** Whether a connection can serve commands now (not connecting, reconnecting or closed). */
export function isRedisReady(redis: Redis): boolean {
  return redis.status === "ready";
}
