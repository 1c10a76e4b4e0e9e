// The ψ-endomorphism G2 subgroup check (zk/g2-subgroup.ts) against the definition it replaces,
// [r]P = O, on points in the order-r subgroup, on random twist points (almost never in it), and on
// subgroup points plus a cofactor-torsion component (on the curve, off the subgroup).
import { randomBytes } from "node:crypto";
import * as snarkjs from "snarkjs";
import { beforeAll, describe, expect, it } from "vitest";
import { BASE_FIELD_MODULUS } from "./proof-shape.ts";
import { isInG2Subgroup, psi } from "./g2-subgroup.ts";

type Bn128 = snarkjs.Bn128Curve;
let curve: Bn128;
beforeAll(async () => {
  curve = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
});

const randomBelow = (m: bigint) => BigInt(`0x${randomBytes(40).toString("hex")}`) % m;
/** A uniformly random affine point of the twist E'(Fq2) (its order is almost never r). */
function randomTwistPoint(): Uint8Array {
  const { G2 } = curve;
  for (;;) {
    const x = G2.F.fromObject([randomBelow(BASE_FIELD_MODULUS), randomBelow(BASE_FIELD_MODULUS)]);
    const rhs = G2.F.add(G2.F.mul(G2.F.square(x), x), G2.b);
    if (G2.F.isSquare(rhs)) return new Uint8Array([...x, ...G2.F.sqrt(rhs)]);
  }
}
/** #E'(Fq2) = r · (2q − r): the cofactor. */
const cofactor = () => 2n * BASE_FIELD_MODULUS - curve.r;
const slowCheck = (p: Uint8Array) => curve.G2.isZero(curve.G2.timesScalar(p, curve.r));

describe("isInG2Subgroup", () => {
  it("ψ is the endomorphism the check assumes: on the curve, and ψ(P) = [q]P on the subgroup", () => {
    const { G2 } = curve;
    expect(G2.isZero(psi(curve, G2.zero))).toBe(true);
    const g = G2.timesScalar(randomTwistPoint(), cofactor());
    expect(G2.isValid(psi(curve, g))).toBe(true);
    expect(G2.eq(psi(curve, g), G2.timesScalar(g, BASE_FIELD_MODULUS % curve.r))).toBe(true);
    const off = randomTwistPoint();
    expect(G2.isValid(psi(curve, off))).toBe(true);
  });

  it("agrees with [r]P = O on subgroup points, random twist points and subgroup + torsion points", () => {
    const { G2 } = curve;
    const verdicts: { fast: boolean; slow: boolean; kind: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const random = randomTwistPoint();
      const inside = G2.toAffine(G2.timesScalar(randomTwistPoint(), cofactor()));
      const torsion = G2.timesScalar(randomTwistPoint(), curve.r); // order divides the cofactor
      const mixed = G2.toAffine(G2.add(inside, torsion));
      for (const [kind, p] of [
        ["random", random],
        ["subgroup", inside],
        ["subgroup (Jacobian)", G2.timesScalar(inside, 5n)],
        ["torsion", G2.toAffine(torsion)],
        ["subgroup + torsion", mixed],
      ] as const)
        verdicts.push({ kind, fast: isInG2Subgroup(curve, p), slow: slowCheck(p) });
    }
    expect(verdicts.filter((v) => v.fast !== v.slow)).toEqual([]);
    // Both kinds were exercised.
    expect(verdicts.filter((v) => v.slow).length).toBeGreaterThanOrEqual(24);
    expect(verdicts.filter((v) => !v.slow).length).toBeGreaterThanOrEqual(30);
    expect(isInG2Subgroup(curve, curve.G2.zero)).toBe(true);
  });
});
