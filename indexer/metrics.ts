/**
 * Prometheus metrics of the indexer: per network, the indexed and head blocks and the lag between
 * them, whether backfill is done and how far it is (target block, done ratio, events per second,
 * seconds left, updated once per INDEXER_PROGRESS_INTERVAL_MS), events written, reorgs, resets and
 * retried errors. Fed by the
 * indexer's own event stream (`onEvent`), so measuring adds no query of its own; served at
 * GET /metrics by `bin/indexer.ts` when METRICS_PORT is set.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { RouteHandler } from "../core/http.ts";
import { metricsRoute, registryFor } from "../core/metrics.ts";
import type { IndexerEvent } from "./sync.ts";

export interface IndexerMetrics {
  registry: Registry;
  /** Pass every indexer event here (compose with any other `onEvent`). */
  observe(event: IndexerEvent): void;
  route: RouteHandler;
}

/** Block numbers stay far below 2^53 on every chain this serves; the gauge is a float anyway. */
const asNumber = (block: bigint) => Number(block);

export function createIndexerMetrics(options: { defaultMetrics?: boolean } = {}): IndexerMetrics {
  const registry = registryFor("indexer", options.defaultMetrics ?? true);
  const labelNames = ["chain_id"] as const;
  const indexedBlock = new Gauge({ name: "indexer_indexed_block", help: "Newest block whose events are committed", labelNames, registers: [registry] });
  const headBlock = new Gauge({ name: "indexer_head_block", help: "Chain head as last seen", labelNames, registers: [registry] });
  const lagBlocks = new Gauge({ name: "indexer_lag_blocks", help: "Head block minus indexed block", labelNames, registers: [registry] });
  const finalizedBlock = new Gauge({ name: "indexer_finalized_block", help: "Newest block below which reorgs are fatal", labelNames, registers: [registry] });
  const ready = new Gauge({ name: "indexer_ready", help: "1 once backfill is done and the network follows its head", labelNames, registers: [registry] });
  const backfillTarget = new Gauge({
    name: "indexer_backfill_target_block",
    help: "The finalized block backfill runs to (head minus confirmations)",
    labelNames,
    registers: [registry],
  });
  const backfillRatio = new Gauge({
    name: "indexer_backfill_progress_ratio",
    help: "Share of the backfill range (deploy block to target) indexed, 0..1; 1 once following the head",
    labelNames,
    registers: [registry],
  });
  const backfillEventsRate = new Gauge({
    name: "indexer_backfill_events_per_second",
    help: "Contract events backfilled per second over the last minute or more",
    labelNames,
    registers: [registry],
  });
  const backfillEta = new Gauge({
    name: "indexer_backfill_eta_seconds",
    help: "Seconds of backfill left at the recent pace (-1 while unknown, 0 when done)",
    labelNames,
    registers: [registry],
  });
  const events = new Counter({
    name: "indexer_events_total",
    help: "Contract events committed, by mode (backfill, follow)",
    labelNames: ["chain_id", "mode"] as const,
    registers: [registry],
  });
  const reorgs = new Counter({ name: "indexer_reorgs_total", help: "Reorgs rolled back", labelNames, registers: [registry] });
  const reorgDepth = new Gauge({ name: "indexer_last_reorg_depth", help: "Depth of the latest reorg", labelNames, registers: [registry] });
  const resets = new Counter({ name: "indexer_resets_total", help: "Networks wiped and re-indexed (chain replaced)", labelNames, registers: [registry] });
  const keyMismatches = new Counter({
    name: "indexer_verifier_key_mismatch_total",
    help: "Settled proofs the chain's verifier accepted that fail under the served verification key (any: the key or the verifier is wrong)",
    labelNames,
    registers: [registry],
  });
  const errors = new Counter({
    name: "indexer_errors_total",
    help: "Errors by code; retryable ones are retried, fatal ones stop the network",
    labelNames: ["chain_id", "code", "fatal"] as const,
    registers: [registry],
  });

  // A network's series exist from its first event, so that alerts and rates see zeros (not
  // absent series) until something happens: not ready, no reorg, no reset.
  const known = new Set<string>();
  const initialize = (chain_id: string) => {
    known.add(chain_id);
    ready.set({ chain_id }, 0);
    backfillRatio.set({ chain_id }, 0);
    backfillEta.set({ chain_id }, -1);
    reorgs.inc({ chain_id }, 0);
    reorgDepth.set({ chain_id }, 0);
    resets.inc({ chain_id }, 0);
    keyMismatches.inc({ chain_id }, 0);
  };

  const observe = (event: IndexerEvent) => {
    const chain_id = String(event.chainId);
    if (!known.has(chain_id)) initialize(chain_id);
    switch (event.type) {
      case "block":
        indexedBlock.set({ chain_id }, asNumber(event.toBlock));
        headBlock.set({ chain_id }, asNumber(event.headBlock));
        lagBlocks.set({ chain_id }, Math.max(0, asNumber(event.headBlock - event.toBlock)));
        if (event.events > 0) events.inc({ chain_id, mode: event.mode }, event.events);
        break;
      case "finalize":
        finalizedBlock.set({ chain_id }, asNumber(event.finalizedBlock));
        break;
      case "ready":
        ready.set({ chain_id }, 1);
        backfillRatio.set({ chain_id }, 1);
        backfillEta.set({ chain_id }, 0);
        backfillEventsRate.set({ chain_id }, 0);
        break;
      case "progress":
        backfillTarget.set({ chain_id }, asNumber(event.progress.targetBlock));
        backfillRatio.set({ chain_id }, event.progress.ratio);
        backfillEventsRate.set({ chain_id }, event.progress.eventsPerSecond ?? 0);
        backfillEta.set({ chain_id }, event.progress.etaSeconds ?? -1);
        break;
      case "reorg":
        reorgs.inc({ chain_id });
        reorgDepth.set({ chain_id }, event.depth);
        break;
      case "rejected-proofs":
        keyMismatches.inc({ chain_id }, event.betIds.length);
        break;
      case "reset":
        resets.inc({ chain_id });
        backfillRatio.set({ chain_id }, 0);
        break;
      case "error":
        errors.inc({ chain_id, code: event.error.code, fatal: "false" });
        break;
      case "fatal":
        errors.inc({ chain_id, code: event.error.code, fatal: "true" });
        ready.set({ chain_id }, 0);
        break;
    }
  };

  return {
    registry,
    observe,
    route: metricsRoute(registry),
  };
}
