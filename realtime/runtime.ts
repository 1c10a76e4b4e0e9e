// Starting the realtime tier from typed settings, for the processes that run it: the dedicated node
// (bin/realtime.ts), the publisher process (bin/publisher.ts), and the gateway / `npm start`
// mounting it on their own HTTP server. bin/wiring.ts maps the configuration onto the settings.
import type { Server as HttpServer } from "node:http";
import type { LaneOptions } from "../core/bounded-lane.ts";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkDirectory } from "../core/networks.ts";
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { createRedisClient, guardRedis } from "../core/redis.ts";
import type { AdmissionLimits } from "./admission.ts";
import { createRedisSocketCounter } from "./admission-redis.ts";
import type { RealtimeLimits, ReplayBudget } from "./connection.ts";
import type { FirehoseLimits } from "./firehose.ts";
import { createMemoryFanout, createRedisFanout, type Fanout } from "./fanout.ts";
import { createLocalLock, createPgAdvisoryLock, type PublisherLock } from "./lock.ts";
import type { Retention } from "../core/outbox.ts";
import { createPublisher, type PruneSettings, type Publisher } from "./publisher.ts";
import { createRealtime, type Realtime } from "./server.ts";

/** The most a handshake waits for the cluster's socket count before admitting on the node's own bounds. */
const ADMISSION_REDIS_TIMEOUT_MS = 200;

/** Redis when REDIS_URL is set, else in-process (then the publisher must run in the same process). */
export function createConfiguredFanout(options: { redisUrl?: string; prefix: string; logger: Logger }): Fanout {
  return options.redisUrl ? createRedisFanout({ url: options.redisUrl, prefix: options.prefix, logger: options.logger }) : createMemoryFanout();
}

/** A PostgreSQL advisory lock when DATABASE_URL is set; PGlite is one process, nothing to elect. */
export function createConfiguredLock(options: { databaseUrl?: string; logger: Logger }): PublisherLock {
  return options.databaseUrl ? createPgAdvisoryLock({ url: options.databaseUrl, logger: options.logger }) : createLocalLock();
}

/** How a node (and its publisher, when it runs one) behaves: the REALTIME_* variables, typed. */
export interface RealtimeSettings {
  /** Socket.IO path: `/ws` on a dedicated node, `/socket.io` on the API host. */
  path: string;
  /** Prefix of the Redis channels; one per deployment. */
  redisPrefix: string;
  /** Run a publisher here too (forced on without Redis: nothing else could reach this node). */
  publisher: boolean;
  transports: ("polling" | "websocket")[];
  limits: RealtimeLimits;
  /** Sockets per client address (per node, and across nodes with Redis), per node, and the memory budget. */
  admission: AdmissionLimits;
  /** Firehose subscriptions per node and per client address. */
  firehose: FirehoseLimits;
  /** Proxies whose X-Forwarded-For entries name the client (TRUST_PROXY_HOPS, as the gateway's). */
  trustProxyHops: number;
  /** The replay window of `sinceSeq`. */
  retention: Retention;
  /** Replay pages charged per client address; none: not charged. */
  replayBudget: ReplayBudget | undefined;
  /** How long a replay waits for a socket that stopped reading before it closes the connection. */
  replayDrainTimeoutMs: number;
  /** Pages a replay pays for before its first read, at most. */
  replayPrepaidPages: number;
  /** The node's bulkhead for replay page reads (core/bounded-lane.ts). */
  replayLane: LaneOptions;
  /** The active publisher's outbox pruning. */
  prune: PruneSettings;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  /** The publisher's safety-net poll; a node's own outbox poll while its feed is down. */
  pollIntervalMs: number;
  feedTimeoutMs: number;
  /** SIGTERM: the most a node waits for its sockets to leave. */
  drainGraceMs: number;
}

export interface StartRealtimeOptions {
  db: Database;
  logger: Logger;
  settings: RealtimeSettings;
  /** Unset: the in-memory adapter (and a publisher in this process). */
  redisUrl?: string;
  /**
   * The node's command connection to `redisUrl` (its owner's: bin/realtime.ts, which also charges
   * replays to the points budget over it), used for admission's cluster count; unset: one of its
   * own. The adapter's pub/sub connections are apart (a subscribed connection runs no commands).
   */
  redis?: Redis;
  /** Selects the publisher lock (unset: PGlite, a local lock). */
  databaseUrl?: string;
  networks?: NetworkDirectory;
}

export interface RunningRealtime {
  realtime: Realtime;
  publisher: Publisher | undefined;
  fanout: Fanout;
  /**
   * Drains the node's sockets (`settings.drainGraceMs` at most), stops the publisher, detaches the
   * node, closes the fan-out (not the HTTP server nor the database).
   */
  stop(): Promise<void>;
}

export async function startRealtime(httpServer: HttpServer, options: StartRealtimeOptions): Promise<RunningRealtime> {
  const { settings } = options;
  const fanout = createConfiguredFanout({ redisUrl: options.redisUrl, prefix: settings.redisPrefix, logger: options.logger });
  // Admission's cluster count: its own connection, failing fast (commands are not queued while
  // Redis is away: a handshake then falls back on the node's own bounds after one deadline at most).
  const ownAdmissionRedis =
    options.redisUrl && !options.redis
      ? createRedisClient(options.redisUrl, { logger: options.logger, role: "realtime:admission", maxRetriesPerRequest: 1 })
      : undefined;
  const admissionRedis = options.redisUrl ? (options.redis ?? ownAdmissionRedis) : undefined;
  const realtime = await createRealtime(httpServer, {
    db: options.db,
    logger: options.logger,
    fanout,
    path: settings.path,
    networks: options.networks,
    limits: settings.limits,
    admission: settings.admission,
    firehose: settings.firehose,
    trustProxyHops: settings.trustProxyHops,
    ...(admissionRedis
      ? {
          clusterCounter: (counts: () => ReadonlyMap<string, number>) =>
            createRedisSocketCounter({
              redis: guardRedis(admissionRedis, { timeoutMs: ADMISSION_REDIS_TIMEOUT_MS }),
              prefix: settings.redisPrefix,
              nodeId: randomUUID(),
              logger: options.logger,
              counts,
            }),
        }
      : {}),
    retention: settings.retention,
    ...(settings.replayBudget ? { replayBudget: settings.replayBudget } : {}),
    replayDrainTimeoutMs: settings.replayDrainTimeoutMs,
    replayPrepaidPages: settings.replayPrepaidPages,
    replayLane: settings.replayLane,
    transports: settings.transports,
    pingIntervalMs: settings.pingIntervalMs,
    pingTimeoutMs: settings.pingTimeoutMs,
    localPollMs: settings.pollIntervalMs,
    feedTimeoutMs: settings.feedTimeoutMs,
  });
  const publisher =
    fanout.kind === "memory" || settings.publisher
      ? createPublisher({
          db: options.db,
          fanout,
          logger: options.logger,
          lock: createConfiguredLock({ databaseUrl: options.databaseUrl, logger: options.logger }),
          pollIntervalMs: settings.pollIntervalMs,
          prune: settings.prune,
        })
      : undefined;
  publisher?.start();
  let stopped: Promise<void> | undefined;
  return {
    realtime,
    publisher,
    fanout,
    stop() {
      stopped ??= (async () => {
        // The publisher keeps feeding this node while its clients drain.
        await realtime.drain(settings.drainGraceMs);
        await publisher?.stop();
        await realtime.close();
        ownAdmissionRedis?.disconnect();
        await fanout.close();
      })();
      return stopped;
    },
  };
}
