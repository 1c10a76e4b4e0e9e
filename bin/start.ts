// `npm start`: the whole service in one process tree on an embedded default — PGlite in DATA_DIR
// when DATABASE_URL is unset (migrated at start), a local anvil chain with the BetVault system,
// the operator simulator and the indexer (DEMO_MODE=chain; with a second anvil, chain 1337, whose
// verifier accepts every proof and whose simulator sends some bad ones: `verified: false` on
// view), the three subgraphs on loopback ports,
// the gateway on PORT (4000) with Socket.IO at /socket.io and the live page at / (built into
// web/dist/ first when missing or stale). NETWORKS_CONFIG indexes real networks instead;
// DEMO_MODE=fixtures serves the deterministic fixture set without a chain. REDIS_URL gives the
// gateway and Socket.IO the shared, Redis-backed setup of production.
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { loadNetworksConfig, type NetworkConfig } from "../indexer/config.ts";
import { IndexerError } from "../indexer/errors.ts";
import { createIndexer, type Indexer } from "../indexer/indexer.ts";
import { REALTIME_PATH } from "../realtime/events.ts";
import { feedCheck } from "../realtime/health.ts";
import { startRealtime } from "../realtime/runtime.ts";
import { ensureLivePageBuilt } from "../web/build.ts";
import { createLivePage } from "../web/server.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { startDemoChain, type DemoChain } from "./demo-chain.ts";
import { startStack } from "./stack.ts";
import {
  cursorSecretProblem,
  GATEWAY_SECTIONS,
  gatewaySettings,
  openConfiguredDatabase,
  openCsvExportReads,
  openReadReplicas,
  REALTIME_SECTIONS,
  realtimeSettings,
  shutdownDeadline,
  stopOnSignals,
  subgraphDeps,
} from "./wiring.ts";
import { startConfiguredTracing } from "./wiring.ts";

const config = loadConfig([...GATEWAY_SECTIONS, ...REALTIME_SECTIONS, "indexer", "start"]);
// The history subgraph runs here: in production its cursor secret is checked before anything starts.
const secretProblem = cursorSecretProblem(config);
if (secretProblem) {
  process.stderr.write(`${secretProblem}\n`);
  process.exit(1);
}
const logger = createLogger({ name: "start", level: config.LOG_LEVEL });
const tracing = await startConfiguredTracing(config, "start");

/** The networks file, validated before anything starts (a real network without its key is refused): or exit 1 naming every problem. */
function configuredNetworks(path: string): NetworkConfig[] {
  try {
    return loadNetworksConfig(path);
  } catch (error) {
    logger.fatal({ code: error instanceof IndexerError ? error.code : undefined }, error instanceof Error ? error.message : String(error));
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
const configured = config.NETWORKS_CONFIG ? configuredNetworks(config.NETWORKS_CONFIG) : undefined;

const rebuilt = await ensureLivePageBuilt();
if (rebuilt) logger.info({ reason: rebuilt }, "live page built into web/dist/");
const db = await openConfiguredDatabase(config, logger);
logger.info({ database: db.kind, dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR }, "database ready");

let chains: DemoChain[] = [];
let networks: NetworkConfig[] = [];
if (configured) {
  networks = configured;
} else if (config.DEMO_MODE === "chain") {
  const started = await Promise.allSettled([startDemoChain({ logger }), startDemoChain({ logger, permissive: true })]);
  chains = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(chains.map((c) => c.stop()));
    throw failed.reason;
  }
  networks = chains.map((c) => c.network);
} else if (config.DEMO_MODE === "fixtures" && config.DEMO_BETS > 0 && (await db.prisma.network.count()) === 0) {
  const summary = await seedFixtures(db, { bets: config.DEMO_BETS, proofCache: readProofCache() });
  logger.info({ counts: summary.counts, proven: summary.proven, whale: summary.whale, sample: summary.sampleSettled }, "empty database: demo fixtures seeded");
}

let indexer: Indexer | undefined;
if (networks.length > 0) {
  indexer = createIndexer({
    db,
    logger: logger.child({ component: "indexer" }),
    networks,
    progressIntervalMs: config.INDEXER_PROGRESS_INTERVAL_MS,
    proofWorkers: config.PROOF_VERIFY_WORKERS,
    skipProofVerification: config.INDEXER_BENCH_SKIP_PROOF_VERIFICATION,
    onEvent: (event) => {
      if (event.type === "reorg") logger.warn({ chainId: event.chainId, depth: event.depth }, "reorg handled");
      if (event.type === "fatal") logger.fatal({ chainId: event.chainId, err: event.error }, "indexer stopped for this network");
    },
  });
  try {
    await indexer.start();
  } catch (error) {
    // E.g. a verifier that does not hold the configured verification key: nothing is served.
    logger.fatal({ err: error, code: error instanceof IndexerError ? error.code : undefined }, "indexer failed to start");
    await indexer.stop();
    await db.close();
    process.exit(1);
  }
}

// The subgraphs' and the realtime tier's reads run under DATABASE_STATEMENT_TIMEOUT_MS on a pool of
// their own; the indexer's writes and the migrations keep the unbounded one. PGlite has one
// connection: shared.
const servingDb =
  config.DATABASE_URL && config.DATABASE_STATEMENT_TIMEOUT_MS > 0
    ? await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true })
    : db;
// Read replicas (DATABASE_READ_URLS) serve the subgraphs only: the indexer, the outbox and the
// realtime tier stay on the primary.
const reads = await openReadReplicas(config, servingDb, logger);
const deps = subgraphDeps(servingDb, logger, config, reads);
// With REDIS_URL the gateway is set up as in production: rate limit buckets and response cache in
// Redis (each falling back in process while Redis is away), Redis in /health, and Socket.IO below
// on the Redis adapter. Without it: an in-process rate limit and response cache (the cache emptied
// with each fresh chain) and the in-memory adapter.
const redis = config.REDIS_URL ? createRedisClient(config.REDIS_URL, { logger, role: "gateway", maxRetriesPerRequest: 1 }) : undefined;
const cacheRedis = config.RESPONSE_CACHE_REDIS_URL
  ? createRedisClient(config.RESPONSE_CACHE_REDIS_URL, { logger, role: "response-cache", maxRetriesPerRequest: 1 })
  : undefined;
// CSV exports read on a small pool of their own, never on the one /health probes (bin/wiring.ts).
const csvExports = await openCsvExportReads(config, db, logger);
const gatewayConfig = gatewaySettings(config, { logger, redis, cacheRedis });
const stack = await startStack({
  deps,
  host: config.HOST,
  port: config.PORT,
  gateway: { ...gatewayConfig, ...createLivePage({ logger }), walletBetPages: csvExports.pages },
});
const realtimeNode = realtimeSettings(config, gatewayConfig.rateLimit?.store);
const realtime = await startRealtime(stack.http.server, {
  // The serving pool, with its deadline: `db` runs the indexer's transactions, which must not have one.
  db: servingDb,
  logger: logger.child({ component: "realtime" }),
  // With Redis this process still publishes (one leader among publishers, by advisory lock).
  // This one process also holds the embedded database, both chains' provers and the indexer: its
  // RSS (about 1 GiB) is not the realtime tier's, so the node memory budget (REALTIME_MAX_MEMORY_MB)
  // is for dedicated nodes; here it refused every socket NODE_FULL. The socket caps still hold.
  settings: { ...realtimeNode, path: REALTIME_PATH.gateway, publisher: true, admission: { ...realtimeNode.admission, maxMemoryBytes: 0 } },
  redisUrl: config.REDIS_URL,
  databaseUrl: config.DATABASE_URL,
  networks: deps.networks,
});
stack.gateway.health.addChecks(() => [feedCheck(realtime.realtime.state())]);
logger.info(
  {
    page: `${stack.url}/`,
    graphql: `${stack.url}/graphql`,
    health: `${stack.url}/health`,
    socketio: `${stack.url}/socket.io`,
    redis: redis ? "rate limit, response cache and Socket.IO adapter" : "none (in process)",
    demo: chains.length > 0 ? "chain" : config.DEMO_MODE,
  },
  "Public Bet Results API ready",
);

stopOnSignals(
  logger,
  async () => {
    await realtime.stop();
    await stack.stop();
    await reads?.close();
    redis?.disconnect();
    cacheRedis?.disconnect();
    await indexer?.stop();
    await Promise.all(chains.map((c) => c.stop()));
    await releaseProverResources();
    await csvExports.close();
    if (servingDb !== db) await servingDb.close();
    await db.close();
    await tracing.stop();
  },
  shutdownDeadline(config.REALTIME_DRAIN_GRACE_MS),
);
