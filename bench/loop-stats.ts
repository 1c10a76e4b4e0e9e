// Event-loop delay and GC pauses of a benchmark's server child, on request (bench/gateways.ts
// --loop-stats): where an open-loop tail comes from. Nothing is measured until the first SIGUSR2
// (a child costs nothing unless asked); that one starts the event-loop delay histogram and the GC
// observer, and each later one reports what they saw since the one before, then starts afresh.
// Every signal is answered with one JSON line on stdout (where the parent reads the ready line),
// numbered from 1: `{ loopStats, seq, ... }`.
import { monitorEventLoopDelay, PerformanceObserver, constants, type PerformanceEntry } from "node:perf_hooks";

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

interface GcTally {
  count: number;
  totalMs: number;
  maxMs: number;
  over5Ms: number;
}

/** Installs the SIGUSR2 handler: the first signal starts measuring, each later one reports `label`'s figures. */
export function reportLoopStatsOnSignal(label: string): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let gc = new Map<string, GcTally>();
  let observer: PerformanceObserver | undefined;
  let since = 0;
  let seq = 0;
  const record = (entry: PerformanceEntry) => {
    const kind = GC_KINDS[(entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1] ?? "other";
    const tally = gc.get(kind) ?? { count: 0, totalMs: 0, maxMs: 0, over5Ms: 0 };
    tally.count++;
    tally.totalMs += entry.duration;
    tally.maxMs = Math.max(tally.maxMs, entry.duration);
    if (entry.duration > 5) tally.over5Ms++;
    gc.set(kind, tally);
  };
  process.on("SIGUSR2", () => {
    seq++;
    if (!observer) {
      observer = new PerformanceObserver((list) => list.getEntries().forEach(record));
      observer.observe({ entryTypes: ["gc"] });
      delay.enable();
      process.stdout.write(`${JSON.stringify({ loopStats: label, seq, started: true })}\n`);
    } else {
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      const round = (x: number) => Math.round(x * 100) / 100;
      const line = {
        loopStats: label,
        seq,
        seconds: round((performance.now() - since) / 1000),
        loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
        gc: Object.fromEntries([...gc].map(([kind, t]) => [kind, { count: t.count, totalMs: round(t.totalMs), maxMs: round(t.maxMs), over5Ms: t.over5Ms }])),
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    delay.reset();
    gc = new Map();
    since = performance.now();
  });
}
