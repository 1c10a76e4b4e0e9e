// Σ s_i·P_i through the wasm's Pippenger multi-exponentiation (zk/multi-exp.ts) equals the sum of
// ffjavascript's own scalar multiplications, zero points and zero scalars included.
import * as snarkjs from "snarkjs";
import { beforeAll, describe, expect, it } from "vitest";
import { g1MultiExp } from "./multi-exp.ts";

let curve: snarkjs.Bn128Curve;
beforeAll(async () => {
  curve = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
});

describe("g1MultiExp", () => {
  it("equals Σ timesScalar(P_i, s_i) for 0, 1, 16, 300 and 1500 terms (two wasm calls) of 128-bit scalars", () => {
    const { G1 } = curve;
    for (const n of [0, 1, 16, 300, 1500]) {
      const points = Array.from({ length: n }, (_, i) => G1.timesScalar(G1.g, 1000n + BigInt(i) * 7919n));
      const scalars = Array.from({ length: n }, (_, i) => (2n ** 128n - 1n) / BigInt(i + 2) + BigInt(i));
      let expected = G1.zero;
      for (const [i, p] of points.entries()) expected = G1.add(expected, G1.timesScalar(p, scalars[i] ?? 0n));
      expect(G1.eq(g1MultiExp(curve, points, scalars), expected)).toBe(true);
    }
  });

  it("takes affine and Jacobian points, the point at infinity and a zero scalar", () => {
    const { G1 } = curve;
    const p = G1.timesScalar(G1.g, 5n);
    const points = [G1.toAffine(p), p, G1.zero, G1.g];
    const scalars = [3n, 4n, 2n ** 127n + 9n, 0n];
    expect(G1.eq(g1MultiExp(curve, points, scalars), G1.timesScalar(G1.g, 35n))).toBe(true);
  });

  it("refuses a scalar outside [0, 2^128) and lists of different lengths", () => {
    const { G1 } = curve;
    expect(() => g1MultiExp(curve, [G1.g], [2n ** 128n])).toThrow(/scalar/);
    expect(() => g1MultiExp(curve, [G1.g], [-1n])).toThrow(/scalar/);
    expect(() => g1MultiExp(curve, [G1.g], [])).toThrow(/lengths/);
  });
});
