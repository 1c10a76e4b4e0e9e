import { Redis, ReplyError, type RedisOptions } from "ioredis";
import type { Logger } from "./logger.ts";
import { waitAtMost } from "./wait-at-most.ts";

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

/**
 * Closes a connection at shutdown within `ms`: a QUIT (what was sent or queued before it is
 * answered first), then the socket. Never an unbounded quit(): a hung Redis never answers it, and
 * on a connection (re)connecting it waits in ioredis's offline queue for as long as Redis is away
 * (with maxRetriesPerRequest null, for ever): a realtime node on SIGTERM never exited (issue 21).
 * Not a bare disconnect() either: it fails what is queued, and the Socket.IO adapter's own commands
 * (its SUBSCRIBEs, queued while a node stopped soon after starting connects) are then unhandled
 * rejections, which end a process.
 */
export async function closeRedis(redis: Redis, ms = 1_000): Promise<void> {
  if (redis.status !== "end" && redis.status !== "close") await waitAtMost(redis.quit(), ms);
  // A no-op once closed; otherwise it stops the reconnecting and fails what is still queued.
  redis.disconnect();
}

/** Whether a connection can serve commands now (not connecting, reconnecting or closed). */
export function isRedisReady(redis: Redis): boolean {
  return redis.status === "ready";
}

/** Why a guarded Redis did not serve a command (also the health check's detail). */
export type RedisFailure = "timed out" | "unreachable";

/** A command a guarded Redis did not run or did not finish within its deadline. */
export class RedisUnavailableError extends Error {
  readonly failure: RedisFailure;
  constructor(failure: RedisFailure) {
    super(`redis ${failure}`);
    this.failure = failure;
    this.name = "RedisUnavailableError";
  }
}

export interface GuardedRedisOptions {
  /** A command unanswered after this long fails (and marks Redis away). */
  timeoutMs: number;
  /** While Redis is away, a PING tries it this often; until one answers, commands fail at once. Default 1 000 ms. */
  probeIntervalMs?: number;
}

/**
 * Redis on a request path: every command gets a deadline, and once one fails or times out, Redis
 * counts as away — the commands waiting on it fail at that moment, later ones fail at once
 * without touching Redis, and a background PING (never a request) finds out when it is back.
 * A hung Redis thus costs the requests in flight when it hung one deadline, and no others.
 * Redis answering with an error (a ReplyError) is not an outage: that command fails alone.
 */
export interface GuardedRedis {
  readonly client: Redis;
  /** Runs `command` within the deadline; throws RedisUnavailableError while Redis is away. */
  run<T>(command: (redis: Redis) => Promise<T>): Promise<T>;
  /** A PING through the guard, for health checks. */
  ping(): Promise<unknown>;
  /** `null` while Redis answers, else the last failure. */
  failure(): RedisFailure | null;
  /** Called with the failure when Redis goes away, and with `null` when it is back. */
  onChange(listener: (failure: RedisFailure | null) => void): void;
}

export function guardRedis(redis: Redis, options: GuardedRedisOptions): GuardedRedis {
  const probeIntervalMs = Math.max(10, options.probeIntervalMs ?? 1_000);
  const listeners: ((failure: RedisFailure | null) => void)[] = [];
  const waiting = new Set<(error: RedisUnavailableError) => void>();
  let failure: RedisFailure | null = null;
  let answeredOnce = false;
  let probe: NodeJS.Timeout | undefined;

  const notify = () => {
    for (const listener of listeners) listener(failure);
  };
  const markDown = (kind: RedisFailure) => {
    const wasUp = failure === null;
    failure = kind;
    for (const fail of waiting) fail(new RedisUnavailableError(kind));
    waiting.clear();
    if (!wasUp) return;
    notify();
    scheduleProbe();
  };
  const scheduleProbe = () => {
    probe = setTimeout(() => {
      probe = undefined;
      if (redis.status === "end") return; // closed for good: nothing to wait for
      if (redis.status !== "ready") return scheduleProbe();
      withDeadline(() => redis.ping()).then(
        () => {
          failure = null;
          notify();
        },
        () => scheduleProbe(),
      );
    }, probeIntervalMs);
    probe.unref();
  };
  const withDeadline = <T>(command: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const fail = (error: RedisUnavailableError) => {
        clearTimeout(timer);
        reject(error);
      };
      const timer = setTimeout(() => {
        waiting.delete(fail);
        reject(new RedisUnavailableError("timed out"));
      }, options.timeoutMs);
      waiting.add(fail);
      command().then(
        (value) => {
          clearTimeout(timer);
          waiting.delete(fail);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          waiting.delete(fail);
          reject(error);
        },
      );
    });

  const guarded: GuardedRedis = {
    client: redis,
    async run(command) {
      if (failure !== null) throw new RedisUnavailableError(failure);
      const { status } = redis;
      // Until connected, ioredis would queue commands: skip Redis. The first connection in progress
      // is no outage; `wait` is a lazy client that connects on its first command.
      if (status === "connecting" || status === "connect") {
        if (answeredOnce) markDown("unreachable");
        throw new RedisUnavailableError("unreachable");
      }
      if (status !== "ready" && status !== "wait") {
        markDown("unreachable");
        throw new RedisUnavailableError("unreachable");
      }
      try {
        const result = await withDeadline(() => command(redis));
        answeredOnce = true;
        return result;
      } catch (error) {
        if (error instanceof ReplyError) throw error;
        markDown(error instanceof RedisUnavailableError ? error.failure : "unreachable");
        throw error instanceof RedisUnavailableError ? error : new RedisUnavailableError("unreachable");
      }
    },
    ping: () => guarded.run((client) => client.ping()),
    failure: () => failure,
    onChange(listener) {
      listeners.push(listener);
    },
  };
  return guarded;
}
