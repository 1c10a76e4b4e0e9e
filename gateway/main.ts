import { Redis } from "ioredis";
import { loadConfig, subgraphUrlOverrides } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { openConfiguredDatabase, SERVICE_VERSION, stopOnSignals } from "../core/service.ts";
import { gatewayProtection } from "./protection.ts";
import { createGateway } from "./server.ts";

const config = loadConfig();
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger, { migrate: false });
const redis = config.REDIS_URL ? new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined;
// Redis is optional for serving reads: its failures degrade health, they never stop the gateway.
redis?.on("error", (error: Error) => logger.warn({ err: error.message }, "redis unavailable"));
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
});
await gateway.listen(config.HOST, config.PORT);
stopOnSignals(logger, async () => {
  await gateway.stop();
  redis?.disconnect();
  await db.close();
});
