// A gateway's readiness (GET /readyz, core/probes.ts), read from the same report as /health: not
// ready while the report is DOWN (no database, or not one subgraph answers) or while it stops.
// One subgraph down only degrades /health, and the gateway stays in rotation: its other queries
// are served, and every replica shares that subgraph, so pulling them out would refuse those too.
// The indexer's checks (lag, backfill) are shown but never decide: every replica shares them.
import type { HealthCheck } from "../../core/health.ts";
import { type Readiness, reasonOf } from "../../core/probes.ts";
import type { HealthMonitor } from "./report.ts";

export async function gatewayReadiness(health: Pick<HealthMonitor, "report">, state: { stopping(): boolean }): Promise<Readiness> {
  const report = await health.report();
  const reasons = report.status === "DOWN" ? report.checks.filter((check) => check.status === "DOWN").map(reasonOf) : [];
  // Served only once Apollo Server started, i.e. with a supergraph loaded (the routes exist from then on).
  const supergraph: HealthCheck = { name: "supergraph", status: "OK", latencyMs: null, detail: null };
  if (state.stopping()) reasons.push("gateway: shutting down");
  return { checks: [supergraph, ...report.checks], reasons };
}
