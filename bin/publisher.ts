// The publisher as its own process: reads the outbox and feeds every realtime node through Redis.
// Run two or more; a PostgreSQL advisory lock keeps exactly one active, the next takes over when it
// dies. Needs DATABASE_URL and REDIS_URL (without them everything runs in one process: npm start).
import { loadConfig } from "../core/config.ts";
import { listen, sendJson, type RouteHandler } from "../core/http.ts";
import { probeRoutes } from "../core/probes.ts";
import { createLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import { publisherReadiness } from "../realtime/health.ts";
import { createPublisherMetrics } from "../realtime/metrics.ts";
import { Outbox } from "../core/outbox.ts";
import { createPublisher } from "../realtime/publisher.ts";
import { createConfiguredFanout, createConfiguredLock } from "../realtime/runtime.ts";
import { openConfiguredDatabase, REALTIME_SECTIONS, realtimeSettings, startConfiguredTracing, stopOnSignals } from "./wiring.ts";

const config = loadConfig(["shared", ...REALTIME_SECTIONS]);
const settings = realtimeSettings(config);
const logger = createLogger({ name: "publisher", level: config.LOG_LEVEL });
if (!config.DATABASE_URL || !config.REDIS_URL) {
  logger.fatal("bin/publisher.ts needs DATABASE_URL and REDIS_URL: without them the publisher runs inside the node (npm start)");
  process.exit(1);
}
const tracing = await startConfiguredTracing(config, "publisher");
// A serving pool (bin/wiring.ts): every read and prune runs under DATABASE_STATEMENT_TIMEOUT_MS and
// gives a stalled server up after it, so a poll stuck behind a lock or on a frozen server fails,
// and the publisher stands down and retries, instead of waiting without a word (issue 21). It runs
// no transaction on it; LISTEN and the lock have connections of their own.
const db = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
const fanout = createConfiguredFanout({ redisUrl: config.REDIS_URL, prefix: settings.redisPrefix, logger });
const publisher = createPublisher({
  db,
  fanout,
  logger,
  lock: createConfiguredLock({ databaseUrl: config.DATABASE_URL, logger }),
  pollIntervalMs: settings.pollIntervalMs,
  prune: settings.prune,
});
publisher.start();
logger.info("publisher started");

const metrics = createPublisherMetrics(publisher, fanout, new Outbox(db));
// METRICS_PORT serves /metrics and the probes (/livez, /readyz: core/probes.ts, realtime/health.ts);
// /readyz asks Redis on a connection of its own (one command at a time, failing fast while away).
const probeRedis = createRedisClient(config.REDIS_URL, { logger, role: "publisher-probe", maxRetriesPerRequest: 0 });
const routes: Record<string, RouteHandler> = {
  "/metrics": metrics.route,
  ...probeRoutes(() => publisherReadiness({ db, publisher, fanout, redisPing: () => probeRedis.ping() }), db),
};
const metricsServer =
  config.METRICS_PORT === undefined
    ? undefined
    : await listen(
        (req, res) => {
          const route = routes[new URL(req.url ?? "/", "http://localhost").pathname];
          return route ? route(req, res) : sendJson(res, 404, { error: "not found" });
        },
        config.HOST,
        config.METRICS_PORT,
      );
if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "publisher metrics listening");

stopOnSignals(logger, async () => {
  await metricsServer?.close(1_000);
  await publisher.stop();
  await fanout.close();
  probeRedis.disconnect();
  await db.close();
  await tracing.stop();
});
