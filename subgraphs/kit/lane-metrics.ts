import { Counter, Gauge, type Registry } from "prom-client";
import type { Database } from "../../core/db.ts";
import type { ExpensiveLane } from "./expensive-lane.ts";

// What an operator sizes the expensive lane by (docs/guides/operating.md): how full it is, how
// often it refuses, and whether anything waits for a pool connection at all (it should not: the
// lane exists so that cheap reads always find one). Read when /metrics is scraped.

export function registerLaneMetrics(registry: Registry, lane: ExpensiveLane | undefined, db: Database): void {
  if (lane) {
    new Gauge({
      name: "expensive_lane_running",
      help: "Expensive statements (counts and pages no index serves) running now in this process's lane",
      registers: [registry],
      collect() {
        this.set(lane.stats().running);
      },
    });
    new Gauge({
      name: "expensive_lane_waiting",
      help: "Expensive statements waiting for the lane",
      registers: [registry],
      collect() {
        this.set(lane.stats().waiting);
      },
    });
    new Counter({
      name: "expensive_lane_refused_total",
      help: "Expensive statements refused with SERVICE_BUSY (queue deadline passed, or the client's share of the queue full)",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(lane.stats().refused);
      },
    });
  }
  if (db.poolStats) {
    const stats = db.poolStats.bind(db);
    new Gauge({
      name: "db_pool_waiting",
      help: "Statements waiting for a connection of this process's PostgreSQL pool",
      registers: [registry],
      collect() {
        this.set(stats().waiting);
      },
    });
  }
}
