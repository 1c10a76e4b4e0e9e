/**
 * Backfill progress, as the operator reads it: block X of Y, the share of the range done since the
 * BetVault deployment, blocks and events per second over a sliding window, and the time left at
 * that pace. `computeProgress` is the arithmetic (pure); `BackfillProgressTracker` keeps the
 * window and says when the next report is due, so that progress is reported at a steady pace
 * (one report per interval) however many batches commit in between.
 */
import { backfillPercent, backfillRatio } from "../core/backfill.ts";

export interface ProgressSample {
  /** When the commit happened (milliseconds, any monotonic clock). */
  at: number;
  /** The block the cursor reached with this commit. */
  block: bigint;
  /** Contract events this commit wrote. */
  events: number;
}

export interface BackfillProgress {
  /** The newest indexed block (block X …). */
  block: bigint;
  /** … of Y: the finalized block backfill runs to (core/finality.ts: head − confirmations + 1). */
  targetBlock: bigint;
  /** Done share of (startBlock, targetBlock], 0..1. */
  ratio: number;
  /** ratio × 100, one decimal. */
  percent: number;
  /** Over the window; null until two samples are some time apart. */
  blocksPerSecond: number | null;
  eventsPerSecond: number | null;
  /** Seconds left at the window's pace, rounded up; null while no pace is known; 0 when done. */
  etaSeconds: number | null;
}

export interface ProgressInput {
  /** The block before the first one to backfill (the cursor at the start: deploy block − 1). */
  startBlock: bigint;
  targetBlock: bigint;
  /** Samples in time order, oldest first; at least one. */
  window: readonly ProgressSample[];
  now: number;
}

export function computeProgress({ startBlock, targetBlock, window, now }: ProgressInput): BackfillProgress {
  const first = window[0];
  const last = window[window.length - 1];
  if (!first || !last) throw new RangeError("computeProgress needs at least one sample");
  const ratio = backfillRatio({ startBlock, targetBlock, indexedBlock: last.block });
  const seconds = (Math.max(now, last.at) - first.at) / 1000;
  const blocks = Number(last.block - first.block);
  const measured = window.length >= 2 && seconds > 0 && blocks >= 0;
  const blocksPerSecond = measured ? blocks / seconds : null;
  const events = window.slice(1).reduce((sum, sample) => sum + sample.events, 0);
  const eventsPerSecond = measured ? events / seconds : null;
  const left = targetBlock > last.block ? Number(targetBlock - last.block) : 0;
  const etaSeconds = left === 0 ? 0 : blocksPerSecond ? Math.ceil(left / blocksPerSecond) : null;
  return { block: last.block, targetBlock, ratio, percent: Number(backfillPercent(ratio)), blocksPerSecond, eventsPerSecond, etaSeconds };
}

export class BackfillProgressTracker {
  private samples: ProgressSample[] = [];
  private startBlock = 0n;
  private targetBlock = 0n;
  private lastReport: number | undefined;

  private readonly options: { intervalMs: number; windowMs: number };
  constructor(options: { intervalMs: number; windowMs: number }) {
    this.options = options;
  }

  /** One backfill commit. */
  record(sample: ProgressSample & { startBlock: bigint; targetBlock: bigint }): void {
    this.startBlock = sample.startBlock;
    this.targetBlock = sample.targetBlock;
    this.samples.push({ at: sample.at, block: sample.block, events: sample.events });
    this.prune(sample.at);
  }

  /** The progress when a report is due (the first one at once, then once per interval), else undefined. */
  due(now: number): BackfillProgress | undefined {
    if (this.samples.length === 0) return undefined;
    if (this.lastReport !== undefined && now - this.lastReport < this.options.intervalMs) return undefined;
    this.lastReport = now;
    this.prune(now);
    return computeProgress({ startBlock: this.startBlock, targetBlock: this.targetBlock, window: this.samples, now });
  }

  /** Backfill ended (caught up, rolled back, reset or failed): the next one starts afresh. */
  reset(): void {
    this.samples = [];
    this.lastReport = undefined;
  }

  /** Drops samples before the window, keeping the newest of them as the rate's anchor. */
  private prune(now: number): void {
    const cutoff = now - this.options.windowMs;
    while (this.samples.length > 1 && (this.samples[1]?.at ?? Number.POSITIVE_INFINITY) <= cutoff) this.samples.shift();
  }
}

/** "1h 02m", "3m 05s", "42s"; "unknown" without a pace. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return "unknown";
  const s = Math.max(0, Math.ceil(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${s}s`;
}

/** The log line: "backfill: block 1200 of 5000 (24.0%), 35.2 events/s, 2m 10s left". */
export function progressMessage(p: BackfillProgress): string {
  const rate = p.eventsPerSecond === null ? "measuring" : `${p.eventsPerSecond.toFixed(1)} events/s`;
  return `backfill: block ${p.block} of ${p.targetBlock} (${p.percent.toFixed(1)}%), ${rate}, ${formatDuration(p.etaSeconds)} left`;
}

/** The same as structured log fields (numbers rounded for reading; blocks as decimal strings). */
export function progressFields(p: BackfillProgress): Record<string, string | number | null> {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    block: p.block.toString(),
    targetBlock: p.targetBlock.toString(),
    percent: p.percent,
    blocksPerSecond: round(p.blocksPerSecond),
    eventsPerSecond: round(p.eventsPerSecond),
    etaSeconds: p.etaSeconds,
  };
}
