// The indexer as a service: reads the environment (DATABASE_URL or DATA_DIR, NETWORKS_CONFIG,
// LOG_LEVEL, HOST + METRICS_PORT for GET /metrics), opens and migrates the database, indexes every configured network until SIGINT /
// SIGTERM. A network that stops on a non-retryable error (a reorg deeper than finality, a wrong
// chain id, ...) stops the process with exit code 2: a supervisor restarting it would only hit
// the same wall, and an operator must look.
import { openDatabase } from "../core/db.ts";
import { listen, sendJson, type RunningHttpServer } from "../core/http.ts";
import { createLogger } from "../core/logger.ts";
import { stopOnSignals } from "../core/service.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { loadIndexerEnv, loadNetworksConfig } from "./config.ts";
import { IndexerError } from "./errors.ts";
import { createIndexer } from "./indexer.ts";
import { createIndexerMetrics } from "./metrics.ts";

function configure() {
  try {
    const env = loadIndexerEnv();
    return { env, networks: loadNetworksConfig(env.NETWORKS_CONFIG) };
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
const { env, networks } = configure();

const logger = createLogger({ name: "indexer", level: env.LOG_LEVEL });
const db = await openDatabase({ url: env.DATABASE_URL, dataDir: env.DATABASE_URL ? undefined : env.DATA_DIR, logger, migrate: true });

const metrics = createIndexerMetrics();
let metricsServer: RunningHttpServer | undefined;

let stopping: Promise<void> | undefined;
const shutdown = () => {
  stopping ??= (async () => {
    await metricsServer?.close(1_000);
    await indexer.stop();
    await releaseProverResources();
    await db.close();
  })();
  return stopping;
};

const indexer = createIndexer({
  db,
  logger,
  networks,
  onEvent: (event) => {
    metrics.observe(event);
    if (event.type === "reorg") logger.warn({ chainId: event.chainId, ancestor: event.ancestor, depth: event.depth }, "reorg handled");
    if (event.type === "block") logger.debug({ chainId: event.chainId, mode: event.mode, from: event.fromBlock, to: event.toBlock, events: event.events }, "blocks indexed");
    if (event.type === "fatal") {
      logger.fatal({ chainId: event.chainId, code: event.error.code, err: event.error }, "network stopped: shutting down");
      void shutdown().finally(() => process.exit(2));
    }
  },
});

if (env.METRICS_PORT !== undefined) {
  metricsServer = await listen(
    (req, res) => (req.url === "/metrics" ? metrics.route(req, res) : sendJson(res, 404, { error: "not found" })),
    env.HOST,
    env.METRICS_PORT,
  );
  logger.info({ url: `${metricsServer.url}/metrics` }, "indexer metrics listening");
}

try {
  await indexer.start();
} catch (error) {
  logger.fatal({ err: error, code: error instanceof IndexerError ? error.code : undefined }, "indexer failed to start");
  await shutdown();
  process.exit(error instanceof IndexerError && !error.retryable ? 2 : 1);
}
logger.info({ networks: networks.map((n) => ({ chainId: n.chainId, name: n.name })) }, "indexer running");
stopOnSignals(logger, shutdown);
