// The dedicated realtime host: one realtime node on HOST:PORT, Socket.IO at REALTIME_PATH (/ws).
// Several run behind a load balancer, sharing state through Redis (REDIS_URL); REALTIME_PUBLISHER=1
// also runs a publisher here (one of all publishers is active).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../core/config.ts";
import type { RouteHandler } from "../core/http.ts";
import { createLogger } from "../core/logger.ts";
import { createRedisClient } from "../core/redis.ts";
import { probeRoutes } from "../core/probes.ts";
import { createNodeHealth } from "../realtime/health.ts";
import { createNodeMetrics } from "../realtime/metrics.ts";
import { startRealtime } from "../realtime/runtime.ts";
import { openConfiguredDatabase, pointsRedis, pointsStore, REALTIME_SECTIONS, realtimeSettings, SERVICE_VERSION, stopOnSignals } from "./wiring.ts";

const config = loadConfig(["shared", ...REALTIME_SECTIONS]);
const logger = createLogger({ name: "realtime", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger, { migrate: false });
// Replays pay from the clients' points budgets, the buckets the gateways charge (bin/wiring.ts replayBudget).
const budgetRedis = config.REDIS_URL ? createRedisClient(config.REDIS_URL, { logger, role: "realtime-budget", maxRetriesPerRequest: 1 }) : undefined;

const routes = new Map<string, RouteHandler>();
const server = http.createServer((req, res) => {
  const route = routes.get(new URL(req.url ?? "/", "http://localhost").pathname);
  if (req.method === "GET" && route) return void Promise.resolve(route(req, res)).catch(() => res.destroy());
  res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
});
const running = await startRealtime(server, {
  db,
  logger,
  settings: realtimeSettings(config, pointsStore(config, pointsRedis(budgetRedis, logger))),
  redisUrl: config.REDIS_URL,
  databaseUrl: config.DATABASE_URL,
});
const health = createNodeHealth({ db, realtime: running.realtime, redis: config.REDIS_URL !== undefined, version: SERVICE_VERSION });
routes.set("/health", health.route);
// GET /livez and /readyz (core/probes.ts, realtime/health.ts): out of rotation without its database or while draining.
for (const [path, route] of Object.entries(probeRoutes(() => health.readiness(), db))) routes.set(path, route);
// Like the gateway's, for the internal network only (deploy/nginx.conf does not route /metrics).
routes.set("/metrics", createNodeMetrics(running.realtime, running.fanout).route);
await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(config.PORT, config.HOST, () => resolve());
});
const { port } = server.address() as AddressInfo;
logger.info({ url: `http://${config.HOST}:${port}`, port, path: running.realtime.path, publisher: running.publisher !== undefined }, "realtime node ready");

stopOnSignals(logger, async () => {
  // Stop accepting at once (the load balancer's next health check fails too), then drain the
  // sockets: each is told to reconnect, and does, to another node.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await running.stop();
  server.closeAllConnections();
  await closed;
  budgetRedis?.disconnect();
  await db.close();
});
