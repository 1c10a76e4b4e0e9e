import type { HealthMonitor } from "./report.ts";

export interface HealthContext {
  health: HealthMonitor;
}
