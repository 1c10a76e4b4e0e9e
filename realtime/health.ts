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

  const database = async (): Promise<HealthCheck> => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timed out">((resolve) => (timer = setTimeout(() => resolve("timed out"), timeoutMs)));
    const outcome = await Promise.race([
      options.db.ping().then(
        () => "ok" as const,
        () => "unreachable" as const,
      ),
      timeout,
    ]);
    clearTimeout(timer);
    const latencyMs = Math.round((performance.now() - started) * 100) / 100;
    return { name: "database", status: outcome === "ok" ? "OK" : "DOWN", latencyMs, detail: outcome === "ok" ? null : outcome };
  };

  const build = async (): Promise<HealthReport> => {
    const state = options.realtime.state();
    const databaseCheck = await database();
    const checks: HealthCheck[] = [databaseCheck];
    if (options.redis) {
      checks.push(
        state.fanoutConnected
          ? { name: "redis", status: "OK", latencyMs: null, detail: null }
          : { name: "redis", status: "DEGRADED", latencyMs: null, detail: "unreachable" },
      );
    }
    checks.push(feedCheck(state));
    return { status: overallStatus(checks, [[databaseCheck]]), version: options.version, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000), checks };
  };

  const report = () => {
    const now = Date.now();
    if (!cached || now - cached.at >= (options.cacheMs ?? 1_000)) cached = { at: now, report: build() };
    return cached.report;
  };

  return {
    report,
    async route(_req, res) {
      const body = await report();
      sendJson(res, body.status === "DOWN" ? 503 : 200, body, { "cache-control": "no-store" });
    },
  };
}
