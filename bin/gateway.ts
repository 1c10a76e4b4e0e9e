// The gateway process: Apollo Gateway in front of the subgraphs (routing URLs from the supergraph,
// or the <NAME>_SUBGRAPH_URL variables), the live page at `/` (web/dist/, `npm run build`), and
// with GATEWAY_SOCKETIO=1 Socket.IO at /socket.io on the same port. HOST:PORT, stops on signals.
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import { createGateway } from "../gateway/server.ts";
import { createUsageRecorder } from "../gateway/schema-usage.ts";
import { openDatabase } from "../core/db.ts";
import { REALTIME_PATH } from "../realtime/events.ts";
import { feedCheck } from "../realtime/health.ts";
import { startRealtime } from "../realtime/runtime.ts";
import { createLivePage } from "../web/server.ts";
import {
  GATEWAY_SECTIONS,
  gatewaySettings,
  openConfiguredDatabase,
  openCsvExportReads,
  REALTIME_SECTIONS,
  realtimeSettings,
  shutdownDeadline,
  stopOnSignals,
} from "./wiring.ts";
import { startConfiguredTracing } from "./wiring.ts";

const config = loadConfig(GATEWAY_SECTIONS);
// Read only when this gateway serves Socket.IO itself.
const realtimeConfig = config.GATEWAY_SOCKETIO ? loadConfig(["shared", ...REALTIME_SECTIONS]) : undefined;
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
const tracing = await startConfiguredTracing(config, "gateway");
// A serving pool (bin/wiring.ts): /health, the response cache's data generation and, with
// GATEWAY_SOCKETIO, the realtime node's replays never wait on a stalled server past its deadline.
// Nothing here runs a transaction on it (schema usage has a connection of its own).
const db = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
// Redis is optional for serving reads: its failures degrade health, they never stop the gateway
// (createRedisClient logs when it goes and when it is back, not every reconnect attempt).
// CSV exports read on a small pool of their own, never on the one /health probes (bin/wiring.ts).
const csvExports = await openCsvExportReads(config, db, logger);
const redis = config.REDIS_URL ? createRedisClient(config.REDIS_URL, { logger, role: "gateway", maxRetriesPerRequest: 1 }) : undefined;
const cacheRedis = config.RESPONSE_CACHE_REDIS_URL
  ? createRedisClient(config.RESPONSE_CACHE_REDIS_URL, { logger, role: "response-cache", maxRetriesPerRequest: 1 })
  : undefined;
const settings = gatewaySettings(config, { logger, redis, cacheRedis });
// Schema usage goes to the primary on a connection of its own, as the role granted only the usage tables.
const usageDb = config.SCHEMA_USAGE_DATABASE_URL
  ? await openDatabase({ url: config.SCHEMA_USAGE_DATABASE_URL, logger, poolSize: 1, applicationName: "schema-usage" })
  : undefined;
const schemaUsage = usageDb
  ? createUsageRecorder({ db: usageDb, logger, maxOperations: config.SCHEMA_USAGE_MAX_OPERATIONS, retentionDays: config.SCHEMA_USAGE_RETENTION_DAYS })
  : undefined;
const gateway = createGateway({
  db,
  logger,
  ...settings,
  ...createLivePage({ logger }),
  // GET /wallets/{address}/bets.csv reads the history data page by page (gateway/csv-export.ts).
  walletBetPages: csvExports.pages,
  schemaUsage,
});
const { server } = await gateway.listen(config.HOST, config.PORT);
// The API host can serve Socket.IO itself (path /socket.io); dedicated nodes serve /ws.
const realtime = realtimeConfig
  ? await startRealtime(server, {
      db,
      logger,
      settings: { ...realtimeSettings(realtimeConfig, settings.rateLimit?.store), path: REALTIME_PATH.gateway },
      redisUrl: config.REDIS_URL,
      databaseUrl: config.DATABASE_URL,
    })
  : undefined;
if (realtime) gateway.health.addChecks(() => [feedCheck(realtime.realtime.state())]);
stopOnSignals(
  logger,
  async () => {
    await realtime?.stop();
    await gateway.stop();
    redis?.disconnect();
    cacheRedis?.disconnect();
    await csvExports.close();
    await usageDb?.close();
    await db.close();
    await tracing.stop();
  },
  shutdownDeadline(realtimeConfig?.REALTIME_DRAIN_GRACE_MS),
);
