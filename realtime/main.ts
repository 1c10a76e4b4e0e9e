// The dedicated realtime host: one realtime node on HOST:PORT, Socket.IO at REALTIME_PATH (/ws).
// Several run behind a load balancer, sharing state through Redis (REDIS_URL); REALTIME_PUBLISHER=1
// also runs a publisher here (one of all publishers is active).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { openConfiguredDatabase, stopOnSignals } from "../core/service.ts";
import { startRealtime } from "./runtime.ts";

const config = loadConfig();
const logger = createLogger({ name: "realtime", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger, { migrate: false });

const server = http.createServer((_req, res) => {
  res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
});
const running = await startRealtime(server, {
  db,
  logger,
  redisUrl: config.REDIS_URL,
  databaseUrl: config.DATABASE_URL,
});
await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(config.PORT, config.HOST, () => resolve());
});
const { port } = server.address() as AddressInfo;
logger.info({ url: `http://${config.HOST}:${port}`, port, path: running.realtime.path, publisher: running.publisher !== undefined }, "realtime node ready");

stopOnSignals(logger, async () => {
  await running.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.close();
});
