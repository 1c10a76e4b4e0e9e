// Configuration → the options of the database, the gateway and the realtime tier, written once.
// Every composition root uses it: the processes in bin/, the in-process stack of `npm start`, the
// tests' stack (test/stack.ts) and the benchmarks' servers (bench/).
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import * as clientOperations from "../client/operations.ts";
import { ConfigError, type Config } from "../core/config.ts";
import { DEFAULT_COMPRESSION } from "../core/compression.ts";
import { openDatabase, stalledServerDeadline, type Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createReadRouter, type ReadRouter } from "../core/read-replicas.ts";
import { guardRedis, type GuardedRedis } from "../core/redis.ts";
import { createClientBudget, type NewEntryBudget } from "../gateway/cache-entry-budget.ts";
import { createRedisPersistedQueryStore } from "../gateway/persisted-queries.ts";
import {
  createFallbackRateLimitStore,
  createMemoryRateLimitStore,
  createRedisRateLimitStore,
  type RateLimitPolicy,
  type RateLimitStore,
} from "../core/token-bucket.ts";
import { createMemoryResponseCacheStore, RedisResponseCacheStore, type ResponseCacheStore } from "../gateway/response-cache.ts";
import type { WalletBetPages } from "../gateway/csv-export.ts";
import type { GatewayDeps, GatewayProtection } from "../gateway/server.ts";
import type { ReplayBudget } from "../realtime/connection.ts";
import type { RealtimeSettings } from "../realtime/runtime.ts";
import type { SubgraphDeps } from "../subgraphs/kit/deps.ts";
import { SUBGRAPHS } from "../subgraphs/registry.ts";
import { cursorKeyFrom, type CursorKeys, MISSING_CURSOR_SECRET } from "../subgraphs/history/cursor.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { ExpensiveLane } from "../subgraphs/kit/expensive-lane.ts";
import { startTracing, type Tracing } from "../core/tracing.ts";

/** The sections a gateway reads. */
export const GATEWAY_SECTIONS = ["shared", "gateway", "subgraphs"] as const;
/** The sections a realtime node reads (a publisher's included: a node may run one). */
export const REALTIME_SECTIONS = ["realtime", "publisher"] as const;

/** The service version reported by `health.version`: the package version. */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * How long a serving connection waits for a statement's answer before it gives the server up
 * (SERVICE_UNAVAILABLE; core/db.ts stalledServerDeadline): DATABASE_STATEMENT_TIMEOUT_MS and a
 * margin for the server's own cancel to arrive on a loaded host. Undefined (never) without one.
 */
export function stalledServerTimeout(config: Config<"shared">): number | undefined {
  return stalledServerDeadline(config.DATABASE_STATEMENT_TIMEOUT_MS, STALLED_SERVER_MARGIN_MS);
}
const STALLED_SERVER_MARGIN_MS = 5_000;

/**
 * PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database in DATA_DIR.
 * `statementTimeout`: the serving side's connections (subgraphs, gateways, realtime nodes, publishers), whose
 * statements run under DATABASE_STATEMENT_TIMEOUT_MS and give a stalled server up after
 * stalledServerTimeout; such a pool must run no transactions (core/db.ts queryTimeoutMs). The
 * indexer's writes and migrations do not.
 */
export function openConfiguredDatabase(
  config: Config<"shared">,
  logger: Logger,
  options: { migrate?: boolean; statementTimeout?: boolean } = {},
): Promise<Database> {
  return openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR,
    logger,
    migrate: options.migrate ?? config.DATABASE_MIGRATE_ON_START,
    poolSize: config.DATABASE_POOL_SIZE,
    statementTimeoutMs: options.statementTimeout ? config.DATABASE_STATEMENT_TIMEOUT_MS : undefined,
    queryTimeoutMs: options.statementTimeout ? stalledServerTimeout(config) : undefined,
    // The expensive lane bounds statements; a parallel plan made each of its counts 3 processes
    // (leader + 2 workers), on a 2-core host every core, starving the cheap reads (issue 21).
    ...(options.statementTimeout ? { parallelWorkersPerGather: 0 } : {}),
  });
}

/**
 * The reads of the CSV exports (GET /wallets/{address}/bets.csv, gateway/csv-export.ts). On
 * PostgreSQL a pool of their own (CSV_EXPORT_POOL_SIZE connections, each page under
 * DATABASE_STATEMENT_TIMEOUT_MS): however many exports run, or stall, they never hold the
 * connections `/health` and the response cache's data-generation poll use, nor the subgraphs'.
 * On PGlite the one embedded connection (`primary`), as everything else.
 */
export async function openCsvExportReads(
  config: Config<"shared" | "gateway">,
  primary: Database,
  logger: Logger,
): Promise<{ db: Database; pages: WalletBetPages; close(): Promise<void> }> {
  const db = config.DATABASE_URL
    ? await openDatabase({
        url: config.DATABASE_URL,
        logger,
        poolSize: config.CSV_EXPORT_POOL_SIZE,
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        queryTimeoutMs: stalledServerTimeout(config),
        applicationName: "csv-export",
        parallelWorkersPerGather: 0,
      })
    : primary;
  return { db, pages: (query) => walletBetsPage(db, query), close: async () => (db === primary ? undefined : db.close()) };
}

/**
 * The subgraphs' read replicas (DATABASE_READ_URLS) in front of `primary`, the serving database of
 * DATABASE_URL; undefined without replicas. One per process: every subgraph of it shares the router.
 */
export async function openReadReplicas(config: Config<"shared">, primary: Database, logger: Logger): Promise<ReadRouter | undefined> {
  if (config.DATABASE_READ_URLS.length === 0) return undefined;
  if (!config.DATABASE_URL) throw new Error("DATABASE_READ_URLS needs DATABASE_URL: replicas follow a PostgreSQL primary, not PGlite");
  return createReadRouter({
    primary,
    primaryUrl: config.DATABASE_URL,
    replicaUrls: config.DATABASE_READ_URLS,
    maxLagBlocks: config.DATABASE_READ_MAX_LAG_BLOCKS,
    maxReplayLagMs: config.DATABASE_READ_MAX_REPLAY_LAG_MS,
    checkIntervalMs: config.DATABASE_READ_CHECK_INTERVAL_MS,
    connectTimeoutMs: config.DATABASE_READ_CONNECT_TIMEOUT_MS,
    poolSize: config.DATABASE_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    logger: logger.child({ component: "read-replicas" }),
  });
}

/**
 * A process that serves the history subgraph calls this before anything else: in production its
 * cursors need a configured secret (MISSING_CURSOR_SECRET); undefined when the configuration is fine.
 */
export function cursorSecretProblem(config: Config<"shared">): string | undefined {
  return config.NODE_ENV === "production" && !config.CURSOR_SECRET ? MISSING_CURSOR_SECRET : undefined;
}

/**
 * The cursor keys of the configuration. Every process of one deployment derives the same key, so
 * one history replica accepts another's cursors. Outside production, without CURSOR_SECRET, the
 * key is derived from DATABASE_URL; never in production, where that string may be public (a
 * compose file) and a published cursor would let one guess its password offline.
 */
export function cursorKeys(config: Config<"shared">): CursorKeys {
  const secret = config.CURSOR_SECRET ?? (config.DATABASE_URL && config.NODE_ENV !== "production" ? `database:${config.DATABASE_URL}` : undefined);
  if (!secret) return {};
  const previous = config.CURSOR_SECRET ? config.CURSOR_SECRET_PREVIOUS : undefined;
  return { cursorKey: cursorKeyFrom(secret), ...(previous ? { previousCursorKey: cursorKeyFrom(previous) } : {}) };
}

export function subgraphDeps(db: Database, logger: Logger, config: Config<"shared">, reads?: ReadRouter): SubgraphDeps {
  return {
    db,
    logger,
    networks: new NetworkDirectory(db),
    production: config.NODE_ENV === "production",
    // One lane per process, shared by its subgraphs: it bounds this process's share of the pool.
    expensiveLane: new ExpensiveLane({
      concurrency: config.EXPENSIVE_LANE_CONCURRENCY,
      perClient: config.EXPENSIVE_LANE_PER_CLIENT,
      queueTimeoutMs: config.EXPENSIVE_LANE_QUEUE_TIMEOUT_MS,
    }),
    ...(reads ? { reads } : {}),
    ...cursorKeys(config),
  };
}

/** Subgraph routing URLs from the environment (one variable per subgraph of the registry), overriding the supergraph's. */
export function subgraphUrlOverrides(config: Config<"subgraphs">): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const { name, urlVariable } of SUBGRAPHS) {
    const url = config[urlVariable];
    if (url) overrides[name] = url;
  }
  return overrides;
}

/**
 * The configured query limits and per-client points budget: shared through Redis when the gateway has
 * it (falling back to in-process buckets while Redis is away or slow), else in process.
 */
/**
 * Each client's budget of cost points (RATE_LIMIT_POINTS): in Redis when the process has it, so
 * every gateway and realtime node charges one bucket per client (in-process buckets while Redis is
 * away or slow), else in this process. Undefined when the budget is off.
 */
export function pointsStore(config: Config<"shared">, shared?: { redis: GuardedRedis; logger: Logger }): RateLimitStore | undefined {
  const policy = pointsPolicy(config);
  if (policy.capacity === 0) return undefined;
  if (!shared) return createMemoryRateLimitStore(policy);
  return createFallbackRateLimitStore({
    shared: createRedisRateLimitStore(shared.redis, policy),
    local: createMemoryRateLimitStore(policy),
    logger: shared.logger,
  });
}

/** The points budget's Redis for a process that charges clients beside its other uses of Redis: guarded (a deadline a command, skipped while away). */
export function pointsRedis(redis: Redis | undefined, logger: Logger, timeoutMs = 250): { redis: GuardedRedis; logger: Logger } | undefined {
  return redis ? { redis: guardRedis(redis, { timeoutMs }), logger } : undefined;
}

/** What a new client's budget starts with: never above a full one (a smaller RATE_LIMIT_POINTS keeps working without setting both). */
export const initialPoints = (config: Config<"shared">): number => Math.min(config.RATE_LIMIT_POINTS_INITIAL, config.RATE_LIMIT_POINTS);

const pointsPolicy = (config: Config<"shared">): RateLimitPolicy => ({
  capacity: config.RATE_LIMIT_POINTS,
  refillPerSecond: config.RATE_LIMIT_POINTS_PER_SECOND,
  initial: initialPoints(config),
});

export function gatewayProtection(config: Config<"shared" | "gateway">, shared?: { redis: GuardedRedis; logger: Logger }): GatewayProtection {
  const policy = pointsPolicy(config);
  // A budget smaller than the largest accepted query would refuse a documented request forever.
  if (policy.capacity > 0 && policy.capacity < config.MAX_QUERY_COST)
    throw new ConfigError(`Invalid configuration:\n  RATE_LIMIT_POINTS: must be 0 (off) or at least MAX_QUERY_COST (${config.MAX_QUERY_COST})`);
  // So is a new client's budget: the largest documented request must pass on an address never seen.
  if (policy.capacity > 0 && (policy.initial ?? policy.capacity) < config.MAX_QUERY_COST)
    throw new ConfigError(
      `Invalid configuration:\n  RATE_LIMIT_POINTS_INITIAL (${policy.initial}): must be at least MAX_QUERY_COST (${config.MAX_QUERY_COST})`,
    );
  // More running than may be open would turn turns off without a word.
  if (config.RATE_LIMIT_MAX_IN_FLIGHT > 0 && config.RATE_LIMIT_RUNNING_PER_CLIENT > config.RATE_LIMIT_MAX_IN_FLIGHT)
    throw new ConfigError(
      `Invalid configuration:\n  RATE_LIMIT_RUNNING_PER_CLIENT: must be 0 (all run) or at most RATE_LIMIT_MAX_IN_FLIGHT (${config.RATE_LIMIT_MAX_IN_FLIGHT})`,
    );
  const store = pointsStore(config, shared);
  return {
    limits: { maxDepth: config.MAX_QUERY_DEPTH, maxAliases: config.MAX_QUERY_ALIASES, maxCost: config.MAX_QUERY_COST },
    rateLimit: store && { store, policy, trustProxyHops: config.TRUST_PROXY_HOPS, newDocuments: newDocumentTokens(config, shared) },
    inFlight:
      config.RATE_LIMIT_MAX_IN_FLIGHT > 0
        ? {
            maxPerClient: config.RATE_LIMIT_MAX_IN_FLIGHT,
            runningPerClient: config.RATE_LIMIT_RUNNING_PER_CLIENT,
            runningPerGateway: config.RATE_LIMIT_RUNNING_PER_GATEWAY,
            trustProxyHops: config.TRUST_PROXY_HOPS,
          }
        : undefined,
  };
}

/** Each client's free tokens of new documents a minute (gateway/validation-work.ts): across gateways in the points budget's Redis when there is one. */
function newDocumentTokens(config: Config<"gateway">, shared?: { redis: GuardedRedis }): NewEntryBudget {
  return createClientBudget({ perMinute: config.RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE, redis: shared?.redis, prefix: "new-document-tokens:" });
}

/** The configured response cache: in Redis when the gateway has it, else the in-process LRU; none when off. */
export function responseCacheStore(config: Config<"gateway">, services: { redis?: Redis | GuardedRedis; logger: Logger }): ResponseCacheStore | undefined {
  if (!config.RESPONSE_CACHE) return undefined;
  if (services.redis) return new RedisResponseCacheStore(services.redis, { logger: services.logger, prefix: config.RESPONSE_CACHE_REDIS_PREFIX });
  return createMemoryResponseCacheStore({ maxEntries: config.RESPONSE_CACHE_MAX_ENTRIES, maxBytes: config.RESPONSE_CACHE_MAX_MB * 1024 * 1024 });
}

/** What the configuration decides of a gateway: everything but its database, logger, extra routes and GraphiQL page. */
export type GatewaySettings = Omit<GatewayDeps, "db" | "logger" | "routes" | "graphiql">;

/**
 * A gateway's settings from its configuration. `redis` (optional: its failures only degrade health)
 * shares the rate limit and the response cache between replicas and is checked by /health; all
 * three use it through one GuardedRedis with REDIS_COMMAND_TIMEOUT_MS as the deadline, so they
 * agree on whether Redis is there. `cacheRedis` (RESPONSE_CACHE_REDIS_URL), when given, holds the
 * response cache instead: a Redis of its own, bounded by its maxmemory and evicting LRU, whose
 * evictions can never drop (and so refill) a rate limit bucket.
 */
export function gatewaySettings(
  config: Config<(typeof GATEWAY_SECTIONS)[number]>,
  services: { logger: Logger; redis?: Redis; cacheRedis?: Redis },
): GatewaySettings {
  const redis = services.redis ? guardRedis(services.redis, { timeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }) : undefined;
  // The cache's own Redis (RESPONSE_CACHE_REDIS_URL), guarded apart: its evictions and outages never touch the rate limit's keys.
  const cacheRedis = services.cacheRedis ? guardRedis(services.cacheRedis, { timeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }) : redis;
  return {
    production: config.NODE_ENV === "production",
    version: SERVICE_VERSION,
    supergraphPath: config.SUPERGRAPH_PATH,
    supergraphRegistry: config.SUPERGRAPH_URL
      ? {
          url: config.SUPERGRAPH_URL,
          key: config.SUPERGRAPH_KEY ? { header: config.SUPERGRAPH_KEY_HEADER, value: config.SUPERGRAPH_KEY } : undefined,
          pollIntervalMs: config.SUPERGRAPH_POLL_INTERVAL_MS,
          keptPath: config.SUPERGRAPH_KEPT_PATH,
        }
      : undefined,
    routedSubgraphs: SUBGRAPHS.map(({ name }) => name),
    subgraphUrls: subgraphUrlOverrides(config),
    redis,
    maxBodyBytes: config.MAX_BODY_BYTES,
    writeDeadlineMs: config.HTTP_WRITE_DEADLINE_MS,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    compression: { ...DEFAULT_COMPRESSION, minBytes: config.COMPRESSION_MIN_BYTES, brotliQuality: config.COMPRESSION_BROTLI_QUALITY },
    health: { maxLagBlocks: config.HEALTH_MAX_LAG_BLOCKS, maxStalenessSeconds: config.HEALTH_MAX_STALENESS_SECONDS },
    ...gatewayProtection(config, redis ? { redis, logger: services.logger } : undefined),
    responseCache: responseCacheStore(config, { redis: cacheRedis, logger: services.logger }),
    // Hashes registered through any gateway, known to all (gateway/persisted-queries.ts); in process without Redis.
    ...(redis
      ? {
          persistedQueries: createRedisPersistedQueryStore(redis, {
            prefix: config.PERSISTED_QUERIES_REDIS_PREFIX,
            maxEntries: config.PERSISTED_QUERIES_MAX_ENTRIES,
            ttlSeconds: config.PERSISTED_QUERIES_TTL_SECONDS,
            maxQueryBytes: config.MAX_BODY_BYTES,
            logger: services.logger,
          }),
        }
      : {}),
    responseCacheBounds: {
      maxEntryBytes: config.RESPONSE_CACHE_MAX_ENTRY_KB * 1024,
      newEntriesPerMinute: config.RESPONSE_CACHE_NEW_ENTRIES_PER_MINUTE,
      trustProxyHops: config.TRUST_PROXY_HOPS,
      // Counted in the rate limit's Redis (never the cache's own, which evicts): one budget across gateways.
      ...(redis ? { sharedBudget: redis } : {}),
    },
    responseCacheGenerationPollMs: config.RESPONSE_CACHE_GENERATION_POLL_MS,
    knownOperations: clientOperationNames(),
  };
}

/** The operation names the client package sends: always their own metric label (core/metrics.ts). */
export function clientOperationNames(): string[] {
  const names = new Set<string>();
  for (const document of Object.values(clientOperations)) {
    for (const match of String(document).matchAll(/\b(?:query|mutation|subscription)\s+([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1]!);
  }
  return [...names];
}

/** A realtime node's settings (and its publisher's); `points`: the clients' budgets its replays pay from (default: this process's own). */
export function realtimeSettings(
  config: Config<"shared" | (typeof REALTIME_SECTIONS)[number]>,
  points: RateLimitStore | undefined = pointsStore(config),
): RealtimeSettings {
  const retention = { maxUpdates: config.REALTIME_REPLAY_MAX_UPDATES, maxAgeMs: config.REALTIME_REPLAY_MAX_AGE_SECONDS * 1000 };
  return {
    path: config.REALTIME_PATH,
    redisPrefix: config.REALTIME_REDIS_PREFIX,
    publisher: config.REALTIME_PUBLISHER,
    transports: config.REALTIME_TRANSPORTS === "websocket" ? ["websocket"] : ["polling", "websocket"],
    limits: {
      maxSubscriptions: config.REALTIME_MAX_SUBSCRIPTIONS,
      maxChainIds: config.REALTIME_MAX_CHAIN_IDS,
      eventsPerSecond: config.REALTIME_EVENTS_PER_SECOND,
      maxMessageBytes: config.REALTIME_MAX_MESSAGE_BYTES,
      maxBufferedBytes: config.REALTIME_MAX_BUFFERED_BYTES,
    },
    admission: {
      maxSocketsPerAddress: config.REALTIME_MAX_SOCKETS_PER_ADDRESS,
      maxSocketsPerAddressCluster: config.REALTIME_MAX_SOCKETS_PER_ADDRESS_CLUSTER,
      maxSockets: config.REALTIME_MAX_SOCKETS,
      maxMemoryBytes: config.REALTIME_MAX_MEMORY_MB * 1024 * 1024,
    },
    firehose: { maxPerNode: config.REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS, maxPerAddress: config.REALTIME_MAX_FIREHOSE_PER_ADDRESS },
    trustProxyHops: config.TRUST_PROXY_HOPS,
    replayBudget: replayBudget(config, points),
    replayDrainTimeoutMs: config.REALTIME_REPLAY_DRAIN_TIMEOUT_MS,
    replayPrepaidPages: config.REALTIME_REPLAY_PREPAID_PAGES,
    replayLane: {
      concurrency: config.REALTIME_REPLAY_LANE_CONCURRENCY,
      perClient: config.REALTIME_REPLAY_LANE_PER_CLIENT,
      queueTimeoutMs: config.REALTIME_REPLAY_LANE_QUEUE_TIMEOUT_MS,
    },
    retention,
    // The replay window decides what the active publisher may delete.
    prune: { intervalMs: config.REALTIME_PRUNE_INTERVAL_MS, batchSize: config.REALTIME_PRUNE_BATCH_SIZE, retention },
    pingIntervalMs: config.REALTIME_PING_INTERVAL_MS,
    pingTimeoutMs: config.REALTIME_PING_TIMEOUT_MS,
    pollIntervalMs: config.REALTIME_POLL_INTERVAL_MS,
    feedTimeoutMs: config.REALTIME_FEED_TIMEOUT_MS,
    drainGraceMs: config.REALTIME_DRAIN_GRACE_MS,
  };
}

/**
 * Socket.IO replays pay from the client's points budget (REALTIME_REPLAY_PAGE_POINTS a page of 100
 * updates), the one its GraphQL requests pay from: `points` is the gateway's store in the same
 * process, or pointsStore() with the Redis the gateways charge. A replay loop then spends what the
 * client could have asked through GraphQL, and the other way round. Undefined when replays are free
 * or the budget is off.
 *
 * The default price, 100 points a page of 100 updates, is five times the price before issue 21
 * (100 a page of 500) and still below the page's CPU at GraphQL's rate: betResults(100) costs 1 965
 * points for ~1.6 ms of the gateway's CPU, ~1.2 points a µs, and a replayed update costs a node ~20
 * µs (bench/replay-cost.ts), so ~2 500 points a page. That price broke honest clients: every socket
 * of one address (tabs, a NAT) resumes at once after a node restarts, and at 2 500 a page with 2
 * prepaid only one of them could (realtime/drain.pg.test.ts, deploy/containers.test.ts). A short
 * resume pays the same 100 points as before; a deep replay pays five times more.
 */
export function replayBudget(config: Config<"shared" | "realtime">, points: RateLimitStore | undefined): ReplayBudget | undefined {
  const price = config.REALTIME_REPLAY_PAGE_POINTS;
  if (!points || price === 0) return undefined;
  // The prepayment is taken all at once: more than a full budget would refuse every deep replay forever.
  const prepaid = config.REALTIME_REPLAY_PREPAID_PAGES * price;
  if (config.RATE_LIMIT_POINTS > 0 && prepaid > config.RATE_LIMIT_POINTS)
    throw new ConfigError(
      `Invalid configuration:\n  REALTIME_REPLAY_PREPAID_PAGES × REALTIME_REPLAY_PAGE_POINTS (${prepaid}): must be at most RATE_LIMIT_POINTS (${config.RATE_LIMIT_POINTS})`,
    );
  // A new client's budget starts below full: its first deep replay must still be payable.
  const initial = initialPoints(config);
  if (config.RATE_LIMIT_POINTS > 0 && prepaid > initial)
    throw new ConfigError(
      `Invalid configuration:\n  REALTIME_REPLAY_PREPAID_PAGES × REALTIME_REPLAY_PAGE_POINTS (${prepaid}): must be at most RATE_LIMIT_POINTS_INITIAL (${initial})`,
    );
  return {
    take: (key, now, pages = 1) => points.take(key, now, pages * price),
    refund: async (key, now, pages) => {
      await points.settle(key, now, -pages * price);
    },
  };
}

/** Starts this process's traces when the OTEL_* variables ask for them (core/tracing.ts). */
export function startConfiguredTracing(config: Config<"shared">, processName: string): Promise<Tracing> {
  return startTracing(
    {
      exporter: config.OTEL_TRACES_EXPORTER,
      endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
      tracesEndpoint: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
      serviceName: config.OTEL_SERVICE_NAME,
    },
    processName,
  );
}

/**
 * The most a shutdown takes before the process exits 1 anyway: above its bounded steps (an HTTP
 * server's close, 10 s; a goodbye to PostgreSQL or Redis, 1 s each; the last spans, 2 s), so it only cuts a step that
 * would never end. A process draining realtime sockets adds REALTIME_DRAIN_GRACE_MS (shutdownDeadline).
 */
export const SHUTDOWN_DEADLINE_MS = 20_000;

/** The shutdown deadline of a process that drains realtime sockets for `drainGraceMs` first. */
export const shutdownDeadline = (drainGraceMs = 0): number => drainGraceMs + SHUTDOWN_DEADLINE_MS;

/**
 * Runs `stop` once on SIGINT/SIGTERM, then exits 0 (1 if it failed); a second signal exits at once.
 * Past `deadlineMs` it exits 1 without waiting further: a supervisor that never sends SIGKILL (a
 * terminal, systemd without a stop timeout) must not be left with a process that never ends.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error({ deadlineMs }, "shutdown timed out");
      process.exit(1);
    }, deadlineMs).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
}
