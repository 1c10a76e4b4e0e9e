// The shared Miller loop (zk/multi-miller.ts) equals the product of ffjavascript's own per-pair
// Miller loops, and pairs to the same pairing check.
import * as snarkjs from "snarkjs";
import { beforeAll, describe, expect, it } from "vitest";
import { millerChunkSize, multiMillerLoop } from "./multi-miller.ts";

let curve: snarkjs.Bn128Curve;
beforeAll(async () => {
  curve = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
});

describe("multiMillerLoop", () => {
  it("equals Π millerLoop(P_i, Q_i), for 1 pair and for a full chunk", () => {
    const { G1, G2, Gt } = curve;
    const chunk = millerChunkSize(curve);
    expect(chunk).toBeGreaterThanOrEqual(8);
    for (const n of [1, 3, chunk]) {
      const pairs = Array.from({ length: n }, (_, i) => ({
        p: G1.timesScalar(G1.g, 1000n + BigInt(i) * 7919n),
        q: G2.timesScalar(G2.g, 31n + BigInt(i) * 104729n),
      }));
      let expected = Gt.one;
      for (const { p, q } of pairs) expected = Gt.mul(expected, curve.millerLoop(curve.prepareG1(G1.toJacobian(p)), curve.prepareG2(G2.toJacobian(q))));
      const got = multiMillerLoop(curve, pairs);
      expect(Gt.eq(got, expected)).toBe(true);
      expect(Gt.eq(curve.finalExponentiation(got), curve.finalExponentiation(expected))).toBe(true);
    }
  });

  it("refuses more pairs than one shared loop takes (never writes past the wasm memory)", () => {
    const { G1, G2 } = curve;
    const pairs = Array.from({ length: millerChunkSize(curve) + 1 }, () => ({ p: G1.g, q: G2.g }));
    expect(() => multiMillerLoop(curve, pairs)).toThrow(/at most \d+ per shared loop/);
    expect(multiMillerLoop(curve, pairs.slice(1)).byteLength).toBe(12 * 32);
  });

  it("e(aP, Q) · e(−P, aQ) = 1 through the shared loop", () => {
    const { G1, G2, Gt } = curve;
    const [g1, g2] = [G1.g, G2.g];
    const a = 123456789n;
    const ok = multiMillerLoop(curve, [
      { p: G1.timesScalar(g1, a), q: g2 },
      { p: G1.neg(g1), q: G2.timesScalar(g2, a) },
    ]);
    expect(Gt.eq(curve.finalExponentiation(ok), Gt.one)).toBe(true);
    const bad = multiMillerLoop(curve, [
      { p: G1.timesScalar(g1, a + 1n), q: g2 },
      { p: G1.neg(g1), q: G2.timesScalar(g2, a) },
    ]);
    expect(Gt.eq(curve.finalExponentiation(bad), Gt.one)).toBe(false);
  });
});
