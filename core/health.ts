// The health vocabulary of every service (the contract's `Health` type): the gateway's `health`
// query and GET /health, and a realtime node's GET /health, all answer a HealthReport.

export type HealthStatus = "OK" | "DEGRADED" | "DOWN";

export interface HealthCheck {
  name: string;
  status: HealthStatus;
  latencyMs: number | null;
  detail: string | null;
}

/** Exactly the JSON of the `health` query's full selection; GET /health serves it as is (HTTP 503 when DOWN). */
export interface HealthReport {
  status: HealthStatus;
  version: string;
  uptimeSeconds: number;
  checks: HealthCheck[];
}

/**
 * The overall status: DOWN when every check of one of the `essential` groups is DOWN (a service
 * cannot answer without its database, a gateway without all its subgraphs; an empty group never
 * counts), else DEGRADED when any check is not OK, else OK.
 */
export function overallStatus(checks: readonly HealthCheck[], essential: readonly (readonly HealthCheck[])[]): HealthStatus {
  if (essential.some((group) => group.length > 0 && group.every((check) => check.status === "DOWN"))) return "DOWN";
  return checks.some((check) => check.status !== "OK") ? "DEGRADED" : "OK";
}
