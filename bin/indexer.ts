// The indexer as a service: reads the environment (DATABASE_URL or DATA_DIR, NETWORKS_CONFIG,
// LOG_LEVEL, HOST + METRICS_PORT for GET /metrics, INDEXER_PROGRESS_INTERVAL_MS, PROOF_VERIFY_WORKERS), opens and
// migrates the database, indexes every configured network until SIGINT / SIGTERM. A network that
// stops on a non-retryable error (a reorg deeper than finality, a wrong chain id, ...) stops the
// process with exit code 2: a supervisor restarting it would only hit the same wall, and an
// operator must look.
import { ConfigError, loadConfig } from "../core/config.ts";
import { listen, sendJson, type RouteHandler, type RunningHttpServer } from "../core/http.ts";
import { probeRoutes } from "../core/probes.ts";
import { createLogger } from "../core/logger.ts";
import { loadNetworksConfig } from "../indexer/config.ts";
import { IndexerError } from "../indexer/errors.ts";
import { createIndexer } from "../indexer/indexer.ts";
import { createIndexerMetrics } from "../indexer/metrics.ts";
import { indexerReadiness } from "../indexer/readiness.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { openConfiguredDatabase, startConfiguredTracing, stopOnSignals } from "./wiring.ts";

/** The configuration and the networks file, or exit 1 naming every problem. */
function configure() {
  try {
    const config = loadConfig(["shared", "indexer"]);
    if (!config.NETWORKS_CONFIG) throw new ConfigError("Invalid configuration:\n  NETWORKS_CONFIG: required, the path of the networks JSON file");
    return { config, networks: loadNetworksConfig(config.NETWORKS_CONFIG) };
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
const { config, networks } = configure();

const logger = createLogger({ name: "indexer", level: config.LOG_LEVEL });
// Before the database: its statements are traced only when tracing is on as it opens.
const tracing = await startConfiguredTracing(config, "indexer");
const db = await openConfiguredDatabase(config, logger);

const metrics = createIndexerMetrics();
let metricsServer: RunningHttpServer | undefined;

let stopping: Promise<void> | undefined;
const shutdown = () => {
  stopping ??= (async () => {
    await metricsServer?.close(1_000);
    await indexer.stop();
    await releaseProverResources();
    await db.close();
    await tracing.stop();
  })();
  return stopping;
};

const indexer = createIndexer({
  db,
  logger,
  networks,
  progressIntervalMs: config.INDEXER_PROGRESS_INTERVAL_MS,
  proofWorkers: config.PROOF_VERIFY_WORKERS,
  skipProofVerification: config.INDEXER_BENCH_SKIP_PROOF_VERIFICATION,
  onEvent: (event) => {
    metrics.observe(event);
    if (event.type === "reorg") logger.warn({ chainId: event.chainId, ancestor: event.ancestor, depth: event.depth }, "reorg handled");
    if (event.type === "block")
      logger.debug({ chainId: event.chainId, mode: event.mode, from: event.fromBlock, to: event.toBlock, events: event.events }, "blocks indexed");
    if (event.type === "fatal") {
      logger.fatal({ chainId: event.chainId, code: event.error.code, err: event.error }, "network stopped: shutting down");
      void shutdown().finally(() => process.exit(2));
    }
  },
});

// METRICS_PORT serves /metrics and the probes (/livez, /readyz: core/probes.ts, indexer/readiness.ts),
// listening before start() so that a long start (registering, checking keys) is alive, not ready.
let started = false;
const routes: Record<string, RouteHandler> = {
  "/metrics": metrics.route,
  ...probeRoutes(() => indexerReadiness(db, indexer, { started: () => started }), db),
};
if (config.METRICS_PORT !== undefined) {
  metricsServer = await listen(
    (req, res) => {
      const route = routes[new URL(req.url ?? "/", "http://localhost").pathname];
      return route ? route(req, res) : sendJson(res, 404, { error: "not found" });
    },
    config.HOST,
    config.METRICS_PORT,
  );
  logger.info({ url: `${metricsServer.url}/metrics` }, "indexer metrics listening");
}

try {
  await indexer.start();
  started = true;
} catch (error) {
  logger.fatal({ err: error, code: error instanceof IndexerError ? error.code : undefined }, "indexer failed to start");
  await shutdown();
  process.exit(error instanceof IndexerError && !error.retryable ? 2 : 1);
}
logger.info({ networks: networks.map((n) => ({ chainId: n.chainId, name: n.name })) }, "indexer running");
stopOnSignals(logger, shutdown);
