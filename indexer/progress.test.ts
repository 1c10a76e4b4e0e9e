// The backfill progress arithmetic: block X of Y, percent, rates over a sliding window, ETA.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BackfillProgressTracker, computeProgress, formatDuration, progressFields, progressMessage, type ProgressSample } from "./progress.ts";

describe("computeProgress", () => {
  it("reports block X of Y, the share done since the start, rates and the time left", () => {
    const window: ProgressSample[] = [
      { at: 0, block: 100n, events: 0 },
      { at: 10_000, block: 300n, events: 50 },
      { at: 20_000, block: 500n, events: 150 },
    ];
    const p = computeProgress({ startBlock: 99n, targetBlock: 1099n, window, now: 20_000 });
    expect(p.block).toBe(500n);
    expect(p.targetBlock).toBe(1099n);
    expect(p.ratio).toBeCloseTo(401 / 1000, 10);
    expect(p.percent).toBe(40.1);
    // 400 blocks and 200 events (the first sample's events are before the window) in 20 s.
    expect(p.blocksPerSecond).toBe(20);
    expect(p.eventsPerSecond).toBe(10);
    expect(p.etaSeconds).toBe(30); // 599 blocks left at 20 blocks/s, rounded up
  });

  it("has no rate or ETA with fewer than two samples or no time between them", () => {
    const one = computeProgress({ startBlock: 0n, targetBlock: 10n, window: [{ at: 5, block: 5n, events: 3 }], now: 5 });
    expect(one.ratio).toBe(0.5);
    expect(one.blocksPerSecond).toBeNull();
    expect(one.eventsPerSecond).toBeNull();
    expect(one.etaSeconds).toBeNull();
    const same = computeProgress({
      startBlock: 0n,
      targetBlock: 10n,
      window: [
        { at: 5, block: 5n, events: 0 },
        { at: 5, block: 6n, events: 0 },
      ],
      now: 5,
    });
    expect(same.etaSeconds).toBeNull();
  });

  it("a stall since the last sample lowers the rate (the window ends now)", () => {
    const window: ProgressSample[] = [
      { at: 0, block: 0n, events: 0 },
      { at: 10_000, block: 100n, events: 10 },
    ];
    expect(computeProgress({ startBlock: 0n, targetBlock: 1000n, window, now: 10_000 }).blocksPerSecond).toBe(10);
    expect(computeProgress({ startBlock: 0n, targetBlock: 1000n, window, now: 20_000 }).blocksPerSecond).toBe(5);
  });

  it("an empty range is done", () => {
    const p = computeProgress({ startBlock: 10n, targetBlock: 10n, window: [{ at: 0, block: 10n, events: 0 }], now: 0 });
    expect(p.ratio).toBe(1);
    expect(p.percent).toBe(100);
    expect(p.etaSeconds).toBe(0);
  });

  it("keeps the ratio in [0, 1] and the ETA finite and non-negative for any input", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.array(fc.record({ at: fc.nat(10 ** 9), block: fc.bigInt({ min: 0n, max: 2n * 10n ** 12n }), events: fc.nat(10 ** 6) }), {
          minLength: 1,
          maxLength: 20,
        }),
        (start, target, samples) => {
          const window = [...samples].sort((a, b) => a.at - b.at);
          const now = window[window.length - 1]!.at;
          const p = computeProgress({ startBlock: start, targetBlock: target, window, now });
          expect(p.ratio).toBeGreaterThanOrEqual(0);
          expect(p.ratio).toBeLessThanOrEqual(1);
          expect(p.percent).toBeGreaterThanOrEqual(0);
          expect(p.percent).toBeLessThanOrEqual(100);
          if (p.etaSeconds !== null) {
            expect(Number.isFinite(p.etaSeconds)).toBe(true);
            expect(p.etaSeconds).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });

  it("refuses a window with no sample", () => {
    expect(() => computeProgress({ startBlock: 0n, targetBlock: 1n, window: [], now: 0 })).toThrow(/at least one sample/);
  });
});

describe("BackfillProgressTracker", () => {
  it("reports at most once per interval, however many batches commit", () => {
    const tracker = new BackfillProgressTracker({ intervalMs: 1_000, windowMs: 60_000 });
    const reported: bigint[] = [];
    for (let t = 0; t <= 5_000; t += 100) {
      tracker.record({ at: t, startBlock: 0n, block: BigInt(t), targetBlock: 10_000n, events: 1 });
      const due = tracker.due(t);
      if (due) reported.push(due.block);
    }
    expect(reported).toEqual([0n, 1000n, 2000n, 3000n, 4000n, 5000n]);
  });

  it("drops samples older than the window but keeps two to measure a rate", () => {
    const tracker = new BackfillProgressTracker({ intervalMs: 0, windowMs: 1_000 });
    tracker.record({ at: 0, startBlock: 0n, block: 0n, targetBlock: 100_000n, events: 0 });
    tracker.record({ at: 500, startBlock: 0n, block: 1_000n, targetBlock: 100_000n, events: 0 });
    tracker.record({ at: 10_000, startBlock: 0n, block: 2_000n, targetBlock: 100_000n, events: 0 });
    // The old fast stretch (0 → 500 ms) is forgotten: 1 000 blocks over 9.5 s.
    expect(tracker.due(10_000)?.blocksPerSecond).toBeCloseTo(1000 / 9.5, 6);
  });

  it("reports nothing before the first sample and after a reset", () => {
    const tracker = new BackfillProgressTracker({ intervalMs: 0, windowMs: 1_000 });
    expect(tracker.due(0)).toBeUndefined();
    tracker.record({ at: 0, startBlock: 0n, block: 1n, targetBlock: 10n, events: 0 });
    tracker.reset();
    expect(tracker.due(10)).toBeUndefined();
  });
});

describe("progressMessage", () => {
  it("says block X of Y, percent, events per second and the time left", () => {
    const p = computeProgress({
      startBlock: 0n,
      targetBlock: 5000n,
      window: [
        { at: 0, block: 1000n, events: 0 },
        { at: 10_000, block: 1200n, events: 352 },
      ],
      now: 10_000,
    });
    expect(progressMessage(p)).toBe("backfill: block 1200 of 5000 (24.0%), 35.2 events/s, 3m 10s left");
    expect(progressFields(p)).toEqual({ block: "1200", targetBlock: "5000", percent: 24, blocksPerSecond: 20, eventsPerSecond: 35.2, etaSeconds: 190 });
  });

  it("formats durations for people", () => {
    expect([formatDuration(null), formatDuration(0), formatDuration(59.2), formatDuration(185), formatDuration(3725)]).toEqual([
      "unknown",
      "0s",
      "1m 00s",
      "3m 05s",
      "1h 02m",
    ]);
  });
});
