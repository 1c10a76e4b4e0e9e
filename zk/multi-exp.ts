// Σ s_i·P_i in G1 with ONE call to the Pippenger multi-exponentiation of ffjavascript's BN254
// wasm (wasmcurves' build_multiexp.js: g1m_multiexpAffine, which picks its window from n): for a
// few hundred 128-bit scalars about a sixth of the group operations of one timesScalar per term.
// Synchronous, on a single-threaded curve instance (its memory is ours between startSyncOp and
// endSyncOp; the wasm's bucket table lives above the bump pointer and is freed the same way).
// zk/multi-exp.test.ts checks it against Σ timesScalar.
import type * as snarkjs from "snarkjs";

type Bn128 = snarkjs.Bn128Curve;

/** Bytes per scalar: the batch's random coefficients are below 2^128. */
const SCALAR_BYTES = 16;
const SCALAR_LIMIT = 1n << BigInt(8 * SCALAR_BYTES);
/** Terms per wasm call: ~80 kB of input, well inside the free wasm memory (which never grows). */
const MAX_TERMS = 1024;

/** Σ scalars[i]·points[i] (points affine or Jacobian, the point at infinity allowed; 0 ≤ s < 2^128), Jacobian. */
export function g1MultiExp(curve: Bn128, points: readonly Uint8Array[], scalars: readonly bigint[]): Uint8Array {
  if (points.length !== scalars.length) throw new Error(`g1MultiExp: ${points.length} points and ${scalars.length} scalars (lengths differ)`);
  let sum = curve.G1.zero;
  for (let i = 0; i < points.length; i += MAX_TERMS)
    sum = curve.G1.add(sum, multiExpChunk(curve, points.slice(i, i + MAX_TERMS), scalars.slice(i, i + MAX_TERMS)));
  return sum;
}

function multiExpChunk(curve: Bn128, points: readonly Uint8Array[], scalars: readonly bigint[]): Uint8Array {
  const { tm, G1 } = curve;
  const multiexp = tm.instance.exports.g1m_multiexpAffine;
  if (!multiexp) throw new Error("not ffjavascript's bn128 wasm");
  const affineSize = 2 * G1.F.n8;
  const bases = new Uint8Array(points.length * affineSize);
  const scalarBytes = new Uint8Array(points.length * SCALAR_BYTES);
  for (const [i, point] of points.entries()) {
    bases.set(point.byteLength === affineSize ? point : G1.toAffine(point), i * affineSize);
    const s = scalars[i] ?? 0n;
    if (s < 0n || s >= SCALAR_LIMIT) throw new Error("g1MultiExp: a scalar outside [0, 2^128)");
    let rest = s;
    for (let b = 0; b < SCALAR_BYTES; b++, rest >>= 8n) scalarBytes[i * SCALAR_BYTES + b] = Number(rest & 0xffn);
  }
  tm.startSyncOp();
  try {
    const pBases = tm.allocBuff(bases);
    const pScalars = tm.allocBuff(scalarBytes);
    const pResult = tm.alloc(3 * G1.F.n8);
    multiexp(pBases, pScalars, SCALAR_BYTES, points.length, pResult);
    return tm.getBuff(pResult, 3 * G1.F.n8);
  } finally {
    tm.endSyncOp();
  }
}
