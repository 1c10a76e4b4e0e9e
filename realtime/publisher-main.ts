// The publisher as its own process: reads the outbox and feeds every realtime node through Redis.
// Run two or more; a PostgreSQL advisory lock keeps exactly one active, the next takes over when it
// dies. Needs DATABASE_URL and REDIS_URL (without them everything runs in one process: npm start).
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { openConfiguredDatabase, stopOnSignals } from "../core/service.ts";
import { loadRealtimeConfig, pruneFromConfig } from "./config.ts";
import { createConfiguredLock, createConfiguredFanout } from "./runtime.ts";
import { createPublisher } from "./publisher.ts";
import { createPublisherMetrics } from "./metrics.ts";
import { Outbox } from "./outbox.ts";
import { listen, sendJson } from "../core/http.ts";

const config = loadConfig();
const realtimeConfig = loadRealtimeConfig();
const logger = createLogger({ name: "publisher", level: config.LOG_LEVEL });
if (!config.DATABASE_URL || !config.REDIS_URL) {
  logger.fatal("publisher-main needs DATABASE_URL and REDIS_URL: without them the publisher runs inside the node (npm start)");
  process.exit(1);
}
const db = await openConfiguredDatabase(config, logger, { migrate: false });
const fanout = createConfiguredFanout({ redisUrl: config.REDIS_URL, prefix: realtimeConfig.REALTIME_REDIS_PREFIX, logger });
const publisher = createPublisher({
  db,
  fanout,
  logger,
  lock: createConfiguredLock({ databaseUrl: config.DATABASE_URL, logger }),
  pollIntervalMs: realtimeConfig.REALTIME_POLL_INTERVAL_MS,
  prune: pruneFromConfig(realtimeConfig),
});
publisher.start();
logger.info("publisher started");

const metrics = createPublisherMetrics(publisher, fanout, new Outbox(db));
const metricsServer = realtimeConfig.METRICS_PORT === undefined
  ? undefined
  : await listen((req, res) => (req.url === "/metrics" ? metrics.route(req, res) : sendJson(res, 404, { error: "not found" })), config.HOST, realtimeConfig.METRICS_PORT);
if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "publisher metrics listening");

stopOnSignals(logger, async () => {
  await metricsServer?.close(1_000);
  await publisher.stop();
  await fanout.close();
  await db.close();
});
