import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backfillPercent, backfillRatio, backfillStartBlock } from "./backfill.ts";

describe("backfill share (one rule for the health report, IndexingStatus and the indexer's log line)", () => {
  it("starts at the block before the deploy block", () => {
    expect(backfillStartBlock(100n)).toBe(99n);
    expect(backfillStartBlock(0n)).toBe(0n);
  });

  it("is the done share of (start, target], clamped to 0..1", () => {
    expect(backfillRatio({ startBlock: 99n, targetBlock: 1099n, indexedBlock: 349n })).toBe(0.25);
    expect(backfillRatio({ startBlock: 99n, targetBlock: 1099n, indexedBlock: 50n })).toBe(0);
    expect(backfillRatio({ startBlock: 99n, targetBlock: 1099n, indexedBlock: 5000n })).toBe(1);
    // An empty range (target at or before the start) is done.
    expect(backfillRatio({ startBlock: 10n, targetBlock: 10n, indexedBlock: 10n })).toBe(1);
    expect(backfillRatio({ startBlock: 10n, targetBlock: 3n, indexedBlock: 10n })).toBe(1);
  });

  it("prints one decimal, rounded down, never 100.0% before the target", () => {
    expect(backfillPercent(0.25)).toBe("25.0");
    expect(backfillPercent(0.999_999)).toBe("99.9");
    expect(backfillPercent(1)).toBe("100.0");
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), (done, extra) => {
        const target = done + extra; // indexed strictly before the target
        const percent = backfillPercent(backfillRatio({ startBlock: 0n, targetBlock: target, indexedBlock: done }));
        const exact = (done * 1000n) / target; // permille, rounded down, in integers
        expect(percent).toBe(`${exact / 10n}.${exact % 10n}`);
      }),
    );
  });
});
