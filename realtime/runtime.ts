// Wiring from configuration, for the processes that run the realtime tier: the dedicated node
// (main.ts), the publisher process (publisher-main.ts), and the gateway / `npm start` mounting it on
// their own HTTP server.
import type { Server as HttpServer } from "node:http";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkDirectory } from "../core/networks.ts";
import { limitsFromConfig, loadRealtimeConfig, pruneFromConfig, retentionFromConfig, type RealtimeConfig } from "./config.ts";
import { createMemoryFanout, createRedisFanout, type Fanout } from "./fanout.ts";
import { createLocalLock, createPgAdvisoryLock, type PublisherLock } from "./lock.ts";
import { createPublisher, type Publisher } from "./publisher.ts";
import { createRealtime, type Realtime } from "./server.ts";

/** Redis when REDIS_URL is set, else in-process (then the publisher must run in the same process). */
export function createConfiguredFanout(options: { redisUrl?: string; prefix: string; logger: Logger }): Fanout {
  return options.redisUrl ? createRedisFanout({ url: options.redisUrl, prefix: options.prefix, logger: options.logger }) : createMemoryFanout();
}

/** A PostgreSQL advisory lock when DATABASE_URL is set; PGlite is one process, nothing to elect. */
export function createConfiguredLock(options: { databaseUrl?: string; logger: Logger }): PublisherLock {
  return options.databaseUrl ? createPgAdvisoryLock({ url: options.databaseUrl, logger: options.logger }) : createLocalLock();
}

export interface StartRealtimeOptions {
  db: Database;
  logger: Logger;
  /** `REDIS_URL`: unset means the in-memory adapter (and a publisher in this process). */
  redisUrl?: string;
  /** `DATABASE_URL`: selects the publisher lock (unset: PGlite, local lock). */
  databaseUrl?: string;
  /** Overrides REALTIME_PATH (default `/ws`); the gateway passes `/socket.io`. */
  path?: string;
  /** Run a publisher here too (forced on without Redis: nothing else could reach this node). */
  publisher?: boolean;
  networks?: NetworkDirectory;
  /** REALTIME_* variables (default process.env). */
  env?: Record<string, string | undefined>;
}

export interface RunningRealtime {
  realtime: Realtime;
  publisher: Publisher | undefined;
  fanout: Fanout;
  config: RealtimeConfig;
  /**
   * Drains the node's sockets (REALTIME_DRAIN_GRACE_MS at most), stops the publisher, detaches the
   * node, closes the fan-out (not the HTTP server nor the database).
   */
  stop(): Promise<void>;
}

export async function startRealtime(httpServer: HttpServer, options: StartRealtimeOptions): Promise<RunningRealtime> {
  const config = loadRealtimeConfig(options.env);
  const fanout = createConfiguredFanout({ redisUrl: options.redisUrl, prefix: config.REALTIME_REDIS_PREFIX, logger: options.logger });
  const realtime = await createRealtime(httpServer, {
    db: options.db,
    logger: options.logger,
    fanout,
    path: options.path ?? config.REALTIME_PATH,
    networks: options.networks,
    limits: limitsFromConfig(config),
    retention: retentionFromConfig(config),
    transports: config.REALTIME_TRANSPORTS === "websocket" ? ["websocket"] : ["polling", "websocket"],
    pingIntervalMs: config.REALTIME_PING_INTERVAL_MS,
    pingTimeoutMs: config.REALTIME_PING_TIMEOUT_MS,
    localPollMs: config.REALTIME_POLL_INTERVAL_MS,
    feedTimeoutMs: config.REALTIME_FEED_TIMEOUT_MS,
  });
  const withPublisher = fanout.kind === "memory" || (options.publisher ?? config.REALTIME_PUBLISHER);
  const publisher = withPublisher
    ? createPublisher({
        db: options.db,
        fanout,
        logger: options.logger,
        lock: createConfiguredLock({ databaseUrl: options.databaseUrl, logger: options.logger }),
        pollIntervalMs: config.REALTIME_POLL_INTERVAL_MS,
        prune: pruneFromConfig(config),
      })
    : undefined;
  publisher?.start();
  let stopped: Promise<void> | undefined;
  return {
    realtime,
    publisher,
    fanout,
    config,
    stop() {
      stopped ??= (async () => {
        // The publisher keeps feeding this node while its clients drain.
        await realtime.drain(config.REALTIME_DRAIN_GRACE_MS);
        await publisher?.stop();
        await realtime.close();
        await fanout.close();
      })();
      return stopped;
    },
  };
}
