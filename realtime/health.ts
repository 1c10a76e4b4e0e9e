// GET /health of a dedicated realtime node (bin/realtime.ts), in the contract's Health shape
// (`status` OK | DEGRADED | DOWN, HTTP 503 only for DOWN, as the gateway's /health):
//
//   database  DOWN when it does not answer (no replay, no resume, no local delivery)
//   redis     DEGRADED while the adapter's connections are down (only with REDIS_URL)
//   feed      DEGRADED while the node delivers from the outbox itself instead of the publisher's feed
//
// Details name only the kind of failure, never a host or a driver message.
import type { Database } from "../core/db.ts";
import { sendJson, type RouteHandler } from "../core/http.ts";
import { overallStatus, type HealthCheck, type HealthReport } from "../core/health.ts";
import { databaseCheck, type Readiness, reasonOf } from "../core/probes.ts";
import type { Realtime } from "./server.ts";

export interface NodeHealthOptions {
  db: Database;
  realtime: Pick<Realtime, "state">;
  /** Whether the node shares state through Redis (a `redis` check is reported). */
  redis: boolean;
  version: string;
  probeTimeoutMs?: number;
  /** Reports are reused this long, so a flood of /health costs one database ping. */
  cacheMs?: number;
}

export interface NodeHealth {
  report(): Promise<HealthReport>;
  /**
   * GET /readyz's readiness (core/probes.ts): not ready without the database (no replay, no
   * resume, no delivery at all) or while draining. A node delivering from the outbox locally
   * (its feed through Redis away) still delivers every update, a second later: it stays in
   * rotation, shown in `feed`; Redis is shared by every node, and pulling them all out would help nobody.
   */
  readiness(): Promise<Readiness>;
  route: RouteHandler;
}

/** `feed`: DEGRADED while the node delivers from the outbox itself (also on a gateway serving Socket.IO). */
export function feedCheck(state: Pick<ReturnType<Realtime["state"]>, "delivery">): HealthCheck {
  return state.delivery === "feed"
    ? { name: "feed", status: "OK", latencyMs: null, detail: null }
    : { name: "feed", status: "DEGRADED", latencyMs: null, detail: "delivering from the outbox locally" };
}

export function createNodeHealth(options: NodeHealthOptions): NodeHealth {
  const startedAt = Date.now();
  const timeoutMs = options.probeTimeoutMs ?? 2_000;
  let cached: { at: number; report: Promise<HealthReport> } | undefined;

  const database = () => databaseCheck(options.db, timeoutMs);

  const build = async (): Promise<HealthReport> => {
    const state = options.realtime.state();
    const db = await database();
    const checks: HealthCheck[] = [db];
    if (options.redis) {
      checks.push(
        state.fanoutConnected
          ? { name: "redis", status: "OK", latencyMs: null, detail: null }
          : { name: "redis", status: "DEGRADED", latencyMs: null, detail: "unreachable" },
      );
    }
    checks.push(feedCheck(state));
    return { status: overallStatus(checks, [[db]]), version: options.version, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000), checks };
  };

  const report = () => {
    const now = Date.now();
    if (!cached || now - cached.at >= (options.cacheMs ?? 1_000)) cached = { at: now, report: build() };
    return cached.report;
  };

  return {
    report,
    async readiness() {
      const body = await report();
      const reasons = body.checks.filter((check) => check.status === "DOWN").map(reasonOf);
      if (options.realtime.state().draining) reasons.push("realtime: draining");
      return { checks: body.checks, reasons };
    },
    async route(_req, res) {
      const body = await report();
      sendJson(res, body.status === "DOWN" ? 503 : 200, body, { "cache-control": "no-store" });
    },
  };
}

/**
 * A publisher's readiness (bin/publisher.ts GET /readyz): it can publish while its database (the
 * outbox, the leader lock) and Redis (the feed) answer. Redis is asked (`redisPing`, a PING with a
 * deadline): the fan-out opens its connections at the first message, so before one it knows
 * nothing. Active or standby is shown, never decides: a standby is ready to take over.
 */
export async function publisherReadiness(options: {
  db: Pick<Database, "ping">;
  publisher: { isActive(): boolean };
  fanout: { connected(): boolean };
  redisPing: () => Promise<unknown>;
}): Promise<Readiness> {
  const [database, redisAnswers] = await Promise.all([
    databaseCheck(options.db),
    Promise.race([
      options.redisPing().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000).unref()),
    ]),
  ]);
  const redis: HealthCheck =
    redisAnswers && options.fanout.connected()
      ? { name: "redis", status: "OK", latencyMs: null, detail: null }
      : { name: "redis", status: "DOWN", latencyMs: null, detail: "unreachable" };
  const role: HealthCheck = { name: "publisher", status: "OK", latencyMs: null, detail: options.publisher.isActive() ? "active" : "standby" };
  const checks = [database, redis, role];
  return { checks, reasons: checks.filter((check) => check.status === "DOWN").map(reasonOf) };
}
