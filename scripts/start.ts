// `npm start`: the whole service in one process tree on an embedded default — PGlite in DATA_DIR
// when DATABASE_URL is unset (migrated at start), a local anvil chain with the BetVault system,
// the operator simulator and the indexer (DEMO_MODE=chain), the three subgraphs on loopback ports,
// the gateway on PORT (4000) with Socket.IO at /socket.io. NETWORKS_CONFIG indexes real networks
// instead; DEMO_MODE=fixtures serves the deterministic fixture set without a chain.
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { openConfiguredDatabase, SERVICE_VERSION, stopOnSignals, subgraphDeps } from "../core/service.ts";
import { startStack } from "../core/stack.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { gatewayProtection } from "../gateway/protection.ts";
import { responseCacheStoreFromConfig } from "../gateway/response-cache.ts";
import { loadNetworksConfig, type NetworkConfig } from "../indexer/config.ts";
import { createIndexer, type Indexer } from "../indexer/indexer.ts";
import { feedCheck } from "../realtime/health.ts";
import { startRealtime } from "../realtime/runtime.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { startDemoChain, type DemoChain } from "./demo-chain.ts";

const config = loadConfig();
const logger = createLogger({ name: "start", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger);
logger.info({ database: db.kind, dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR }, "database ready");

let chain: DemoChain | undefined;
let networks: NetworkConfig[] = [];
if (config.NETWORKS_CONFIG) {
  networks = loadNetworksConfig(config.NETWORKS_CONFIG);
} else if (config.DEMO_MODE === "chain") {
  chain = await startDemoChain({ logger });
  networks = [chain.network];
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
    onEvent: (event) => {
      if (event.type === "reorg") logger.warn({ chainId: event.chainId, depth: event.depth }, "reorg handled");
      if (event.type === "fatal") logger.fatal({ chainId: event.chainId, err: event.error }, "indexer stopped for this network");
    },
  });
  await indexer.start();
}

const deps = subgraphDeps(db, logger, config);
const stack = await startStack({
  deps,
  host: config.HOST,
  port: config.PORT,
  version: SERVICE_VERSION,
  supergraphPath: config.SUPERGRAPH_PATH,
  maxBodyBytes: config.MAX_BODY_BYTES,
  health: { maxLagBlocks: config.HEALTH_MAX_LAG_BLOCKS, maxStalenessSeconds: config.HEALTH_MAX_STALENESS_SECONDS },
  protection: gatewayProtection(config),
  // npm start runs without Redis: the in-process LRU, emptied with each fresh chain.
  responseCache: responseCacheStoreFromConfig(config, { logger }),
  responseCacheGenerationPollMs: config.RESPONSE_CACHE_GENERATION_POLL_MS,
});
const realtime = await startRealtime(stack.http.server, {
  db,
  logger: logger.child({ component: "realtime" }),
  redisUrl: config.REDIS_URL,
  databaseUrl: config.DATABASE_URL,
  path: "/socket.io",
  networks: deps.networks,
  // With Redis this process still publishes (one leader among publishers, by advisory lock).
  publisher: true,
});
stack.gateway.health.addChecks(() => [feedCheck(realtime.realtime.state())]);
logger.info(
  { page: `${stack.url}/`, graphql: `${stack.url}/graphql`, health: `${stack.url}/health`, socketio: `${stack.url}/socket.io`, demo: chain ? "chain" : config.DEMO_MODE },
  "Public Bet Results API ready",
);

stopOnSignals(logger, async () => {
  await realtime.stop();
  await stack.stop();
  await indexer?.stop();
  await chain?.stop();
  await releaseProverResources();
  await db.close();
});
