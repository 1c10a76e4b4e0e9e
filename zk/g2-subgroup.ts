// Membership of a BN254 G2 point in the order-r subgroup, without the 254-bit multiplication by r.
//
// ψ is the untwist-Frobenius-twist endomorphism of the twist E'(Fq2) (Galbraith–Scott):
//   ψ(x, y) = (conj(x) · ξ^((q−1)/3), conj(y) · ξ^((q−1)/2)),  ξ = 9 + u,
// and for BN254 (seed x₀ = 4965661367192848881, x₀ ≢ 4 mod 13, x₀ ≢ 92 mod 97), a point P of E'
// is in G2 exactly when  [x₀+1]P + ψ([x₀]P) + ψ²([x₀]P) = ψ³([2x₀]P)  (Dai, Lin, Zhao, Zhou,
// "Fast subgroup membership testings for G1, G2 and GT on pairing-friendly curves", eprint
// 2022/348, §3 and §5.1): one 63-bit multiplication instead of a 254-bit one.
// zk/g2-subgroup.test.ts checks it against [r]P = O on subgroup, random and torsion-shifted points.
import type * as snarkjs from "snarkjs";
import { BASE_FIELD_MODULUS as Q } from "./proof-shape.ts";

type Bn128 = snarkjs.Bn128Curve;
type Fq2 = readonly [bigint, bigint];

/** The BN254 seed x₀ (6x₀ + 2 is the ate loop count). */
export const BN254_SEED = 4965661367192848881n;

const mod = (a: bigint) => ((a % Q) + Q) % Q;
const fq2Mul = (a: Fq2, b: Fq2): Fq2 => [mod(a[0] * b[0] - a[1] * b[1]), mod(a[0] * b[1] + a[1] * b[0])];
function fq2Pow(base: Fq2, e: bigint): Fq2 {
  let out: Fq2 = [1n, 0n];
  let b = base;
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) out = fq2Mul(out, b);
    b = fq2Mul(b, b);
  }
  return out;
}
const XI: Fq2 = [9n, 1n];
/** ξ^((q−1)/3) and ξ^((q−1)/2): the coefficients of ψ on x and y. */
const PSI_X = fq2Pow(XI, (Q - 1n) / 3n);
const PSI_Y = fq2Pow(XI, (Q - 1n) / 2n);

const constants = new WeakMap<Bn128, { x: Uint8Array; y: Uint8Array }>();
function psiConstants(curve: Bn128): { x: Uint8Array; y: Uint8Array } {
  let c = constants.get(curve);
  if (!c) {
    c = { x: curve.G2.F.fromObject([...PSI_X]), y: curve.G2.F.fromObject([...PSI_Y]) };
    constants.set(curve, c);
  }
  return c;
}

/** ψ(P) for an affine or Jacobian point (the Frobenius is a field automorphism: Z just conjugates). */
export function psi(curve: Bn128, point: Uint8Array): Uint8Array {
  const F2 = curve.G2.F;
  const F1 = F2.F;
  const n = F2.n8;
  const half = F1.n8;
  const conj = (a: Uint8Array) => {
    const out = new Uint8Array(n);
    out.set(a.subarray(0, half));
    out.set(F1.neg(a.slice(half, n)), half);
    return out;
  };
  const c = psiConstants(curve);
  const out = new Uint8Array(point.byteLength);
  out.set(F2.mul(conj(point.slice(0, n)), c.x), 0);
  out.set(F2.mul(conj(point.slice(n, 2 * n)), c.y), n);
  if (point.byteLength === 3 * n) out.set(conj(point.slice(2 * n, 3 * n)), 2 * n);
  return out;
}

/** True when `point` (on the twist: check that first) is in the order-r subgroup G2. */
export function isInG2Subgroup(curve: Bn128, point: Uint8Array): boolean {
  const { G2 } = curve;
  if (G2.isZero(point)) return true;
  const xP = G2.timesScalar(point, BN254_SEED);
  const psiXP = psi(curve, xP);
  const lhs = G2.add(G2.add(G2.add(xP, point), psiXP), psi(curve, psiXP));
  const rhs = psi(curve, psi(curve, psi(curve, G2.double(xP))));
  return G2.eq(lhs, rhs);
}
