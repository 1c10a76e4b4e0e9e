// The indexer's readiness (GET /readyz on METRICS_PORT, core/probes.ts): ready once it started
// (every network registered, the verification keys checked) while its database answers. A network
// that backfills or lags is shown (`indexer:<network>`) but does not make it unready: it is doing
// its work. A network that stopped on a fatal error stops the process (bin/indexer.ts).
import type { Database } from "../core/db.ts";
import type { HealthCheck } from "../core/health.ts";
import { databaseCheck, type Readiness, reasonOf } from "../core/probes.ts";
import type { NetworkStatus } from "./sync.ts";

export async function indexerReadiness(db: Pick<Database, "ping">, indexer: { status(): NetworkStatus[] }, state: { started(): boolean }): Promise<Readiness> {
  const database = await databaseCheck(db);
  const networks = state.started() ? indexer.status().map(networkCheck) : [];
  const checks = [database, ...networks];
  const reasons = [database, ...networks].filter((check) => check.status === "DOWN").map(reasonOf);
  if (!state.started()) reasons.push("indexer: starting (registering the networks, checking the verification keys)");
  return { checks, reasons };
}

function networkCheck(status: NetworkStatus): HealthCheck {
  const check = (state: HealthCheck["status"], detail: string): HealthCheck => ({ name: `indexer:${status.name}`, status: state, latencyMs: null, detail });
  if (status.failed) return check("DOWN", `stopped: ${status.failed.code}`);
  const position = `block ${status.indexedBlock ?? "none"} of head ${status.headBlock ?? "unknown"}`;
  return status.isReady ? check("OK", position) : check("DEGRADED", `backfilling: ${position}`);
}
