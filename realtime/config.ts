import { z } from "zod";
import { parseEnv } from "../core/config.ts";
import type { RealtimeLimits } from "./connection.ts";
import type { Retention } from "./outbox.ts";
import type { PruneSettings } from "./publisher.ts";

// The realtime tier's environment, parsed once at start-up (beside core/config.ts, which holds the
// variables every service shares: HOST, PORT, DATABASE_URL, DATA_DIR, REDIS_URL, LOG_LEVEL, …).

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
/** A slow consumer's bound: 0 (none) or at least 64 KiB, so that a burst of ordinary updates never trips it. */
const bufferedBytes = nonNegativeInt.refine((v) => v === 0 || v >= 64 * 1024, "must be 0 (no bound) or at least 65536");
const flag = z.enum(["0", "1", "false", "true", ""]).default("").transform((v) => v === "1" || v === "true");

const schema = z.object({
  REALTIME_PATH: z.string().regex(/^\/[A-Za-z0-9._~/-]*$/, "REALTIME_PATH must be a URL path").optional(),
  REALTIME_REDIS_PREFIX: z.string().min(1).default("bets:"),
  REALTIME_PUBLISHER: flag,
  REALTIME_TRANSPORTS: z.enum(["polling,websocket", "websocket"]).default("polling,websocket"),
  REALTIME_MAX_SUBSCRIPTIONS: positiveInt.default(200),
  REALTIME_MAX_CHAIN_IDS: positiveInt.default(32),
  REALTIME_EVENTS_PER_SECOND: positiveInt.default(20),
  REALTIME_MAX_MESSAGE_BYTES: positiveInt.default(16 * 1024),
  REALTIME_MAX_BUFFERED_BYTES: bufferedBytes.default(4 * 1024 * 1024),
  REALTIME_REPLAY_MAX_UPDATES: nonNegativeInt.default(100_000),
  REALTIME_REPLAY_MAX_AGE_SECONDS: nonNegativeInt.default(24 * 3600),
  REALTIME_PRUNE_INTERVAL_MS: nonNegativeInt.default(60_000),
  REALTIME_PRUNE_BATCH_SIZE: positiveInt.max(100_000).default(1_000),
  REALTIME_PING_INTERVAL_MS: positiveInt.default(25_000),
  REALTIME_PING_TIMEOUT_MS: positiveInt.default(20_000),
  REALTIME_POLL_INTERVAL_MS: positiveInt.default(1_000),
  REALTIME_FEED_TIMEOUT_MS: nonNegativeInt.default(5_000),
  REALTIME_DRAIN_GRACE_MS: nonNegativeInt.default(10_000),
  /** publisher-main.ts: GET /metrics on HOST:METRICS_PORT (unset: no listener). Nodes serve it on their own port. */
  METRICS_PORT: z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(0).max(65_535).optional()),
});

export type RealtimeConfig = z.infer<typeof schema>;

export function loadRealtimeConfig(env: Record<string, string | undefined> = process.env): RealtimeConfig {
  return parseEnv(schema, env);
}

export function limitsFromConfig(config: RealtimeConfig): RealtimeLimits {
  return {
    maxSubscriptions: config.REALTIME_MAX_SUBSCRIPTIONS,
    maxChainIds: config.REALTIME_MAX_CHAIN_IDS,
    eventsPerSecond: config.REALTIME_EVENTS_PER_SECOND,
    maxMessageBytes: config.REALTIME_MAX_MESSAGE_BYTES,
    maxBufferedBytes: config.REALTIME_MAX_BUFFERED_BYTES,
  };
}

export function retentionFromConfig(config: RealtimeConfig): Retention {
  return { maxUpdates: config.REALTIME_REPLAY_MAX_UPDATES, maxAgeMs: config.REALTIME_REPLAY_MAX_AGE_SECONDS * 1000 };
}

/** The active publisher's outbox pruning: the replay window decides what goes. */
export function pruneFromConfig(config: RealtimeConfig): PruneSettings {
  return { intervalMs: config.REALTIME_PRUNE_INTERVAL_MS, batchSize: config.REALTIME_PRUNE_BATCH_SIZE, retention: retentionFromConfig(config) };
}
