import { loadConfig, subgraphUrlOverrides } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import { openConfiguredDatabase, SERVICE_VERSION, stopOnSignals } from "../core/service.ts";
import { REALTIME_PATH } from "../realtime/events.ts";
import { feedCheck } from "../realtime/health.ts";
import { startRealtime } from "../realtime/runtime.ts";
import { gatewayProtection } from "./protection.ts";
import { responseCacheStoreFromConfig } from "./response-cache.ts";
import { createGateway } from "./server.ts";

const config = loadConfig();
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger, { migrate: false });
// Redis is optional for serving reads: its failures degrade health, they never stop the gateway
// (createRedisClient logs when it goes and when it is back, not every reconnect attempt).
const redis = config.REDIS_URL ? createRedisClient(config.REDIS_URL, { logger, role: "gateway", maxRetriesPerRequest: 1 }) : undefined;
const gateway = createGateway({
  db,
  logger,
  redis,
  production: config.NODE_ENV === "production",
  version: SERVICE_VERSION,
  supergraphPath: config.SUPERGRAPH_PATH,
  subgraphUrls: subgraphUrlOverrides(config),
  maxBodyBytes: config.MAX_BODY_BYTES,
  health: { maxLagBlocks: config.HEALTH_MAX_LAG_BLOCKS, maxStalenessSeconds: config.HEALTH_MAX_STALENESS_SECONDS },
  ...gatewayProtection(config, redis),
  responseCache: responseCacheStoreFromConfig(config, { redis, logger }),
  responseCacheGenerationPollMs: config.RESPONSE_CACHE_GENERATION_POLL_MS,
});
const { server } = await gateway.listen(config.HOST, config.PORT);
// The API host can serve Socket.IO itself (path /socket.io); dedicated nodes serve /ws.
const realtime = config.GATEWAY_SOCKETIO
  ? await startRealtime(server, { db, logger, redisUrl: config.REDIS_URL, databaseUrl: config.DATABASE_URL, path: REALTIME_PATH.gateway })
  : undefined;
if (realtime) gateway.health.addChecks(() => [feedCheck(realtime.realtime.state())]);
stopOnSignals(logger, async () => {
  await realtime?.stop();
  await gateway.stop();
  redis?.disconnect();
  await db.close();
});
