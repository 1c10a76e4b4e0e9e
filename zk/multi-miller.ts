// Π e'(P_i, Q_i) for many pairs with ONE shared Miller loop (not final-exponentiated): the
// accumulator's squaring, the most expensive step of each of the ~65 iterations, is paid once
// for all pairs instead of once per pair; each pair only adds its line evaluations. The result
// equals the product of ffjavascript's per-pair millerLoop outputs exactly ((Π f)² = Π f²).
//
// It drives the exports of ffjavascript's BN254 wasm (wasmcurves' build_bn128.js: prepareG1,
// prepareG2, f2m_mul1, __mulBy024, ftm_square) in the order its own bn128_millerLoop uses them,
// on a single-threaded curve instance (its memory is ours between startSyncOp and endSyncOp).
// zk/multi-miller.test.ts checks it against curve.millerLoop.
import type * as snarkjs from "snarkjs";

type Bn128 = snarkjs.Bn128Curve;

/** 6x₀ + 2, the optimal ate loop count of BN254 (as build_bn128.js), bits from the least significant. */
const ATE_LOOP_COUNT = 29793968203157093288n;
const ATE_BITS: number[] = [];
for (let e = ATE_LOOP_COUNT; e > 0n; e >>= 1n) ATE_BITS.push(Number(e & 1n));

/** How many pairs one pass holds in the wasm memory (a prepared G2 point is ~17 kB; the memory is 1.6 MB). */
const MAX_CHUNK = 16;

/** Pairs per shared loop: what fits in the free wasm memory, at most MAX_CHUNK. */
export function millerChunkSize(curve: Bn128): number {
  const free = curve.tm.memory.buffer.byteLength - (curve.tm.u32[0] ?? 0) - 4096;
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor(free / (curve.preQSize + curve.prePSize + 2 * 192))));
}

/**
 * The product of the Miller loops of (p[i], q[i]) (G1 and G2 points, affine or Jacobian, none
 * zero: the caller leaves zero pairs out, their factor is 1), as an Fq12 element in ffjavascript's
 * representation. At most millerChunkSize(curve) pairs.
 */
export function multiMillerLoop(curve: Bn128, pairs: readonly { p: Uint8Array; q: Uint8Array }[]): Uint8Array {
  const { tm, G1, G2 } = curve;
  const x = tm.instance.exports;
  const name = curve.name;
  const n8 = G1.F.n8;
  const f2 = 2 * n8;
  const coefSize = 3 * f2;
  const prepareG1 = x[`${name}_prepareG1`];
  const prepareG2 = x[`${name}_prepareG2`];
  const mulBy024 = x[`${name}__mulBy024`];
  const { ftm_one: one, ftm_square: square, f2m_mul1: mul1 } = x;
  if (!prepareG1 || !prepareG2 || !mulBy024 || !one || !square || !mul1) throw new Error("not ffjavascript's bn128 wasm");
  if (pairs.length > millerChunkSize(curve)) throw new Error(`${pairs.length} pairs: at most ${millerChunkSize(curve)} per shared loop (wasm memory)`);
  tm.startSyncOp();
  try {
    const f = tm.alloc(12 * n8);
    const vw = tm.alloc(f2);
    const vv = tm.alloc(f2);
    const preP: number[] = [];
    const coef: number[] = [];
    for (const { p, q } of pairs) {
      const pP = tm.allocBuff(G1.toJacobian(p));
      const pre = tm.alloc(curve.prePSize);
      prepareG1(pP, pre);
      preP.push(pre);
      const pQ = tm.allocBuff(G2.toJacobian(q));
      const preQ = tm.alloc(curve.preQSize);
      prepareG2(pQ, preQ);
      coef.push(preQ + 3 * f2); // the coefficients follow the prepared point itself
    }
    const line = () => {
      for (let k = 0; k < preP.length; k++) {
        const c = coef[k] as number;
        const pre = preP[k] as number;
        mul1(c + f2, pre + n8, vw); // ELL_VW · P.y
        mul1(c + 2 * f2, pre, vv); // ELL_VV · P.x
        mulBy024(c, vw, vv, f);
        coef[k] = c + coefSize;
      }
    };
    one(f);
    for (let i = ATE_BITS.length - 2; i >= 0; i--) {
      square(f, f);
      line();
      if (ATE_BITS[i]) line();
    }
    line(); // the two Frobenius steps
    line();
    return tm.getBuff(f, 12 * n8);
  } finally {
    tm.endSyncOp();
  }
}
