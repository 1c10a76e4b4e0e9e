import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { confirmationsAt, depthAt, finalityBound, finalizedBlockAt, isFinal } from "./finality.ts";
import { betDepth } from "./networks.ts";

// The contract's rule: confirmations = head − change block + 1; finalized ⇔ confirmations ≥ the
// network's confirmations; finalizedBlock = the newest block for which that holds.
describe("the finality rule", () => {
  it("is final exactly when confirmations reach the network's setting (the boundary block)", () => {
    // confirmations: 2, head 305: a change in 304 has 2 confirmations and is final; one in 305 has 1.
    expect(depthAt(304n, 305n, 2)).toEqual({ confirmations: 2n, finalized: true });
    expect(depthAt(305n, 305n, 2)).toEqual({ confirmations: 1n, finalized: false });
    expect(finalizedBlockAt(305n, 2)).toBe(304n);
  });

  it("counts nothing before the head covers the change", () => {
    expect(confirmationsAt(10n, null)).toBe(0n);
    expect(confirmationsAt(10n, 9n)).toBe(0n);
    expect(isFinal(0n, 0)).toBe(false);
  });

  it("finalizedBlock is the newest block whose changes are final, for any head and setting", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 1n << 64n }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.bigInt({ min: 0n, max: 200_000n }),
        (head, required, back) => {
          const finalizedBlock = finalizedBlockAt(head, required);
          const block = head - back;
          if (block < 0n) return;
          // Every block up to finalizedBlock is final, every block above it is not (where one is final at all).
          if (depthAt(finalizedBlock, head, required).finalized) {
            expect(depthAt(block, head, required).finalized).toBe(block <= finalizedBlock);
          } else {
            expect(depthAt(block, head, required).finalized).toBe(false);
          }
        },
      ),
    );
  });

  it("is what the subgraphs' betDepth answers, whatever finalized block a cursor recorded", () => {
    // 303: what an indexer of the old rule (head − confirmations) stored; the head decides.
    const network = { chainId: 31337, name: "localnet", confirmations: 2, headBlock: 305n, finalizedBlock: 303n };
    expect(betDepth(304n, network)).toEqual({ confirmations: 2n, finalized: true });
    expect(betDepth(305n, network)).toEqual({ confirmations: 1n, finalized: false });
  });

  it("finalityBound: a change is final exactly when its block is at or below the bound (no head: nothing is)", () => {
    fc.assert(
      fc.property(
        fc.option(fc.bigInt({ min: 0n, max: 1n << 40n })),
        fc.integer({ min: 0, max: 100 }),
        fc.bigInt({ min: -120n, max: 120n }),
        (head, required, offset) => {
          const block = (head ?? 50n) + offset;
          if (block < 0n) return;
          expect(block <= finalityBound(head, required)).toBe(depthAt(block, head, required).finalized);
        },
      ),
    );
    expect(finalityBound(null, 2)).toBe(-1n);
    expect(finalityBound(1n, 5)).toBe(-3n);
  });
});
