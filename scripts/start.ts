// `npm start`: the whole service in one process tree on an embedded default — PGlite in DATA_DIR
// when DATABASE_URL is unset (migrated at start), the three subgraphs on loopback ports, the
// gateway on PORT (4000). An empty database is first filled with the demo fixture set.
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { openConfiguredDatabase, SERVICE_VERSION, stopOnSignals, subgraphDeps } from "../core/service.ts";
import { startStack } from "../core/stack.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { gatewayProtection } from "../gateway/protection.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { releaseProverResources } from "../zk/groth16.ts";

const config = loadConfig();
const logger = createLogger({ name: "start", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger);
logger.info({ database: db.kind, dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR }, "database ready");

if (config.DEMO_BETS > 0 && (await db.prisma.network.count()) === 0) {
  const summary = await seedFixtures(db, { bets: config.DEMO_BETS, proofCache: readProofCache() });
  await releaseProverResources();
  logger.info({ counts: summary.counts, proven: summary.proven, whale: summary.whale, sample: summary.sampleSettled }, "empty database: demo fixtures seeded");
}

const stack = await startStack({
  deps: subgraphDeps(db, logger, config),
  host: config.HOST,
  port: config.PORT,
  version: SERVICE_VERSION,
  supergraphPath: config.SUPERGRAPH_PATH,
  maxBodyBytes: config.MAX_BODY_BYTES,
  health: { maxLagBlocks: config.HEALTH_MAX_LAG_BLOCKS, maxStalenessSeconds: config.HEALTH_MAX_STALENESS_SECONDS },
  protection: gatewayProtection(config),
});
logger.info({ graphql: `${stack.url}/graphql`, health: `${stack.url}/health` }, "Public Bet Results API ready");
stopOnSignals(logger, async () => {
  await stack.stop();
  await db.close();
});
