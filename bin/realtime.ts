// The dedicated realtime host: one realtime node on HOST:PORT, Socket.IO at REALTIME_PATH (/ws).
// Several run behind a load balancer, sharing state through Redis (REDIS_URL); REALTIME_PUBLISHER=1
// also runs a publisher here (one of all publishers is active).
import type { Counter } from "prom-client";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { slowReaderCounter } from "../core/write-deadline.ts";
import { createRedisClient } from "../core/redis.ts";
import { probeRoutes } from "../core/probes.ts";
import { createNodeHealth } from "../realtime/health.ts";
import { createNodeMetrics } from "../realtime/metrics.ts";
import { createNodeHttpServer } from "../realtime/node-http.ts";
import { listenOn } from "../core/http.ts";
import { trackConnections } from "../core/track-connections.ts";
import { waitAtMost } from "../core/wait-at-most.ts";
import { startRealtime } from "../realtime/runtime.ts";
import {
  openConfiguredDatabase,
  pointsRedis,
  pointsStore,
  REALTIME_SECTIONS,
  realtimeSettings,
  SERVICE_VERSION,
  shutdownDeadline,
  startConfiguredTracing,
  stopOnSignals,
} from "./wiring.ts";

const config = loadConfig(["shared", ...REALTIME_SECTIONS]);
const logger = createLogger({ name: "realtime", level: config.LOG_LEVEL });
const tracing = await startConfiguredTracing(config, "realtime");
// A serving pool (bin/wiring.ts): replays, heals, local delivery and the in-node publisher's reads
// run under DATABASE_STATEMENT_TIMEOUT_MS, and give a stalled server up after it. Nothing here runs
// a transaction on it; LISTEN and the publisher's lock have connections of their own.
const db = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
// The node's one command connection: replays pay from the clients' points budgets over it (the
// buckets the gateways charge, bin/wiring.ts replayBudget), and admission counts sockets across
// the cluster over it. The adapter's two pub/sub connections are the only others.
const commandRedis = config.REDIS_URL ? createRedisClient(config.REDIS_URL, { logger, role: "realtime:commands", maxRetriesPerRequest: 1 }) : undefined;

// Counted once the node's metrics exist (below); the deadline holds from the first connection.
let slowReaders: Counter | undefined;
const http = createNodeHttpServer({ writeDeadlineMs: config.HTTP_WRITE_DEADLINE_MS, onSlowReaderCut: () => slowReaders?.inc() });
const { server } = http;
const connections = trackConnections(server);
const running = await startRealtime(server, {
  db,
  logger,
  settings: realtimeSettings(config, pointsStore(config, pointsRedis(commandRedis, logger))),
  redisUrl: config.REDIS_URL,
  redis: commandRedis,
  databaseUrl: config.DATABASE_URL,
});
const health = createNodeHealth({ db, realtime: running.realtime, redis: config.REDIS_URL !== undefined, version: SERVICE_VERSION });
http.route("/health", health.route);
// GET /livez and /readyz (core/probes.ts, realtime/health.ts): out of rotation without its database or while draining.
for (const [path, route] of Object.entries(probeRoutes(() => health.readiness(), db))) http.route(path, route);
// Like the gateway's, for the internal network only (deploy/nginx.conf does not route /metrics).
const metrics = createNodeMetrics(running.realtime, running.fanout);
slowReaders = slowReaderCounter(metrics.registry);
http.route("/metrics", metrics.route);
// LISTEN_SOCKETS sockets of LISTEN_BACKLOG each (core/http.ts): a crowd's handshakes are accepted, not left queued.
const { port, closeExtra } = await listenOn(server, config.HOST, config.PORT);
logger.info({ url: `http://${config.HOST}:${port}`, port, path: running.realtime.path, publisher: running.publisher !== undefined }, "realtime node ready");

stopOnSignals(
  logger,
  async () => {
    // Stop accepting at once (the load balancer's next health check fails too), then drain the
    // sockets: each is told to reconnect, and does, to another node.
    const extraClosed = closeExtra();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await running.stop();
    server.closeAllConnections();
    // The extra listening sockets' connections too (core/http.ts listenOn): server.close() does not count them.
    // A second for the WebSockets' closing handshakes: one whose client never answers is held 30 s by ws.
    const allClosed = Promise.all([closed, extraClosed]);
    await waitAtMost(allClosed, 1_000);
    connections.destroyAll();
    await allClosed;
    commandRedis?.disconnect();
    await db.close();
    await tracing.stop();
  },
  shutdownDeadline(config.REALTIME_DRAIN_GRACE_MS),
);
