import { describe, expect, it } from "vitest";
import { betResult, FIELD_MODULUS, GAMES } from "../../chain/betvault.ts";
import { bucketOf, chiSquare, chiSquarePValue, expectedRtp, lnGamma, ratio, upperRegularizedGamma } from "./fairness.ts";

describe("upperRegularizedGamma / chiSquarePValue", () => {
  it("matches chi-square tables for 15 degrees of freedom", () => {
    expect(chiSquarePValue(0)).toBe(1);
    expect(chiSquarePValue(15)).toBeCloseTo(0.4514, 4);
    expect(chiSquarePValue(30.578)).toBeCloseTo(0.01, 5);
    expect(chiSquarePValue(24.996)).toBeCloseTo(0.05, 5);
    expect(chiSquarePValue(8.547)).toBeCloseTo(0.9, 4);
    expect(chiSquarePValue(37.697)).toBeCloseTo(0.001, 6);
    expect(chiSquarePValue(1e6)).toBe(0);
  });

  it("agrees with the closed forms Q(1, x) = e^-x and Q(n, x) = e^-x Σ x^k/k! on both of its branches", () => {
    for (const x of [0.01, 0.5, 1.9, 2.1, 7, 40]) {
      expect(upperRegularizedGamma(1, x)).toBeCloseTo(Math.exp(-x), 12);
      let sum = 0;
      let term = 1;
      for (let k = 0; k < 5; k++) {
        sum += term;
        term *= x / (k + 1);
      }
      expect(upperRegularizedGamma(5, x)).toBeCloseTo(Math.exp(-x) * sum, 12);
    }
  });

  it("is decreasing in x and refuses undefined arguments", () => {
    let previous = 1;
    for (let x = 0.5; x < 80; x += 0.5) {
      const p = chiSquarePValue(x);
      expect(p).toBeLessThan(previous);
      previous = p;
    }
    expect(() => upperRegularizedGamma(0, 1)).toThrow(RangeError);
    expect(() => upperRegularizedGamma(1, -1)).toThrow(RangeError);
  });

  it("lnGamma matches factorials and Γ(1/2) = √π", () => {
    expect(lnGamma(7.5)).toBeCloseTo(Math.log(1871.2543057977884), 10);
    expect(lnGamma(11)).toBeCloseTo(Math.log(3628800), 10);
    expect(lnGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
  });
});

describe("chiSquare", () => {
  it("is 0 for a flat histogram and for no observation", () => {
    expect(chiSquare(Array(16).fill(5n))).toBe(0);
    expect(chiSquare(Array(16).fill(0n))).toBe(0);
  });

  it("is Pearson's statistic against equal expected counts", () => {
    const counts = [10n, 0n, 6n, 0n, ...Array(12).fill(0n)];
    const expected = 16 / 16;
    const pearson = counts.reduce((sum, n) => sum + (Number(n) - expected) ** 2 / expected, 0);
    expect(chiSquare(counts)).toBeCloseTo(pearson, 12);
    // Everything in one bucket: N·(k − 1).
    expect(chiSquare([100n, ...Array(15).fill(0n)])).toBe(1500);
  });
});

describe("bucketOf", () => {
  it("splits [0, r) into 16 buckets [i·r/16, (i+1)·r/16)", () => {
    expect(bucketOf(0n)).toBe(0);
    expect(bucketOf(FIELD_MODULUS - 1n)).toBe(15);
    for (let i = 1n; i < 16n; i++) {
      // The smallest integer ≥ i·r/16 opens bucket i; the one before closes bucket i − 1.
      const start = (i * FIELD_MODULUS + 15n) / 16n;
      expect(bucketOf(start)).toBe(Number(i));
      expect(bucketOf(start - 1n)).toBe(Number(i) - 1);
    }
  });
});

describe("expectedRtp", () => {
  it("counts the winning outcomes of [0, r) exactly", () => {
    // r is odd: one more even outcome than odd ones; r % 100 = 17 and r % 10 = 7.
    expect(FIELD_MODULUS % 2n).toBe(1n);
    expect(FIELD_MODULUS % 100n).toBe(17n);
    expect(FIELD_MODULUS % 10n).toBe(7n);
    expect(expectedRtp("coinflip")).toBe(0.99);
    expect(expectedRtp("dice")).toBe(0.98);
    expect(expectedRtp("wheel")).toBe(0.98);
    expect(expectedRtp("roulette")).toBe(0);
  });

  it("is the mean return of the contract's rule over a whole period of outcomes", () => {
    for (const game of ["coinflip", "dice", "wheel"] as const) {
      const { modulus, multiplierBps } = GAMES[game];
      let paid = 0n;
      const stake = 10_000n;
      for (let outcome = 0n; outcome < modulus; outcome++) paid += betResult(game, outcome, stake).payout;
      // Over one period of the modulus the share of winners is winBelow / modulus (r adds a negligible remainder).
      expect(expectedRtp(game)).toBeCloseTo(Number(paid) / Number(stake * modulus), 12);
      expect(multiplierBps).toBeGreaterThan(0n);
    }
  });
});

describe("ratio", () => {
  it("divides big integers into a double, 0 over 0", () => {
    expect(ratio(0n, 0n)).toBe(0);
    expect(ratio(98n * 10n ** 30n, 100n * 10n ** 30n)).toBe(0.98);
  });
});
