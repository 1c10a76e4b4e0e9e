// Batch verification of Groth16 proofs against one verification key (BN254).
//
// snarkjs checks one proof as  e(-A, B) · e(vk_x, γ) · e(C, δ) · e(α, β) = 1  with
// vk_x = IC0 + Σ_j s_j·IC_j (snarkjs's src/groth16_verify.js). A batch draws a random
// 128-bit r_i per proof and checks the random linear combination
//
//   Π_i e(-r_i·A_i, B_i) · e(Σ_i r_i·vk_x_i, γ) · e(Σ_i r_i·C_i, δ) · e((Σ_i r_i)·α, β) = 1
//
// with one Miller loop per proof, three shared ones and ONE final exponentiation. The proofs'
// Miller loops run together in chunks (zk/multi-miller.ts: one accumulator squaring per
// iteration for the whole chunk, not one per proof). Σ r_i·vk_x_i is
// computed as Σ_j (Σ_i r_i·s_ij mod r)·IC_j, so it costs nPublic + 1 scalar multiplications per
// batch, not per proof; Σ r_i·C_i is one multi-exponentiation per (sub-)batch (zk/multi-exp.ts).
// A batch that passes means every proof in it verifies (except with probability about 2^-128); a
// batch of one is exactly snarkjs's check raised to r_1 ≠ 0 in a group of prime order r, so the
// same verdict. A failing batch is bisected: a proof is true only if a sub-batch containing it
// passed; a half whose sibling passed is known to fail and split without a check of its own.
//
// Input checks before any pairing: the shape rules of zk/proof-shape.ts (canonical decimals,
// signals < r, affine points), the points on their curves as snarkjs checks them, and B in the
// order-r subgroup of the twist, which snarkjs does not check but the EVM pairing precompile does
// (a genuine proof always passes it; the random combination is only sound for subgroup points),
// by the ψ-endomorphism test of zk/g2-subgroup.ts (a 63-bit multiplication, not one by r).
//
// Runs on its own single-threaded BN254 instance (snarkjs/ffjavascript wasm, no worker threads),
// so it can live inside a worker of zk/verify-pool.ts. Never throws on bad input: false.
import { randomBytes } from "node:crypto";
import * as snarkjs from "snarkjs";
import { isInG2Subgroup } from "./g2-subgroup.ts";
import { g1MultiExp } from "./multi-exp.ts";
import { millerChunkSize, multiMillerLoop } from "./multi-miller.ts";
import { FIELD_MODULUS, isWellFormedProof, type Groth16VerificationKey, type SnarkjsProof } from "./proof-shape.ts";

export interface BatchItem {
  proof: unknown;
  publicSignals: unknown;
}

export interface BatchVerifier {
  /** One verdict per item, in order. */
  verify(items: readonly BatchItem[]): boolean[];
  /** How many pairing checks (final exponentiations) this verifier ran: for tests and benchmarks. */
  readonly checks: number;
}

type Bn128 = snarkjs.Bn128Curve;
type Point = Uint8Array;

/** A proof that passed the input checks, with what every sub-batch containing it needs. */
interface Prepared {
  /** (-r·A, B), the proof's own pairing; undefined when either is zero (its factor is 1). */
  pair: { p: Point; q: Point } | undefined;
  /** C (r·C is summed over each sub-batch by one multi-exponentiation). */
  c: Point;
  r: bigint;
  signals: bigint[];
}

interface Member {
  index: number;
  prepared: Prepared;
}

/** Members whose Miller loops were computed together: Π of their own, reused by the bisection. */
interface Unit {
  members: readonly Member[];
  miller: Point;
}

/** A uniformly random scalar in [1, 2^128). */
function randomScalar(): bigint {
  for (;;) {
    const r = BigInt(`0x${randomBytes(16).toString("hex")}`);
    if (r !== 0n) return r;
  }
}

const big = (values: readonly string[]): bigint[] => values.map((v) => BigInt(v));

let shared: Promise<Bn128> | undefined;
/** This thread's single-threaded BN254 instance (built once, ~0.2 s). */
function curveOfThisThread(): Promise<Bn128> {
  shared ??= snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
  return shared;
}

export async function createBatchVerifier(vk: Groth16VerificationKey): Promise<BatchVerifier> {
  const curve = await curveOfThisThread();
  const { G1, G2, Gt } = curve;
  const IC = vk.IC.map((p) => G1.fromObject(big(p)));
  const alpha = G1.fromObject(big(vk.vk_alpha_1));
  const g2 = (p: string[][]) => curve.prepareG2(G2.toJacobian(G2.fromObject(p.map(big))));
  const [beta, gamma, delta] = [g2(vk.vk_beta_2), g2(vk.vk_gamma_2), g2(vk.vk_delta_2)];
  const miller = (p: Point, preparedQ: Point) => (G1.isZero(p) ? Gt.one : curve.millerLoop(curve.prepareG1(G1.toJacobian(p)), preparedQ));
  let checks = 0;

  function prepare(item: BatchItem): Prepared | undefined {
    try {
      if (!isWellFormedProof(vk, item.proof, item.publicSignals)) return undefined;
      const proof = item.proof as SnarkjsProof;
      const a = G1.fromObject(big(proof.pi_a));
      const b = G2.fromObject(proof.pi_b.map(big));
      const c = G1.fromObject(big(proof.pi_c));
      if (!G1.isValid(a) || !G2.isValid(b) || !G1.isValid(c)) return undefined;
      if (!isInG2Subgroup(curve, b)) return undefined;
      const r = randomScalar();
      const ra = G1.neg(G1.timesScalar(a, r));
      const pair = G1.isZero(ra) || G2.isZero(b) ? undefined : { p: ra, q: b };
      return { pair, c, r, signals: big(item.publicSignals as string[]) };
    } catch {
      return undefined;
    }
  }

  /** Π of the members' own Miller loops, in shared loops of as many pairs as the wasm memory holds. */
  function millerOf(members: readonly Member[]): Point {
    const pairs = members.flatMap((m) => (m.prepared.pair ? [m.prepared.pair] : []));
    const chunkSize = millerChunkSize(curve);
    let acc = Gt.one;
    for (let i = 0; i < pairs.length; i += chunkSize) acc = Gt.mul(acc, multiMillerLoop(curve, pairs.slice(i, i + chunkSize)));
    return acc;
  }

  /** The batch equation over the units' members, with one final exponentiation. */
  function passes(units: readonly Unit[]): boolean {
    checks++;
    let acc = Gt.one;
    let sumR = 0n;
    const t = new Array<bigint>(vk.nPublic).fill(0n);
    for (const unit of units) acc = Gt.mul(acc, unit.miller);
    const members = units.flatMap((u) => u.members.map((m) => m.prepared));
    for (const p of members) {
      sumR += p.r;
      for (let j = 0; j < t.length; j++) t[j] = ((t[j] ?? 0n) + p.r * (p.signals[j] ?? 0n)) % FIELD_MODULUS;
    }
    const sumC = g1MultiExp(
      curve,
      members.map((p) => p.c),
      members.map((p) => p.r),
    );
    sumR %= FIELD_MODULUS;
    let x = G1.timesScalar(IC[0] as Point, sumR);
    for (let j = 0; j < t.length; j++) x = G1.add(x, G1.timesScalar(IC[j + 1] as Point, t[j] ?? 0n));
    acc = Gt.mul(acc, miller(x, gamma));
    acc = Gt.mul(acc, miller(sumC, delta));
    acc = Gt.mul(acc, miller(G1.timesScalar(alpha, sumR), beta));
    return Gt.eq(curve.finalExponentiation(acc), Gt.one);
  }

  /**
   * Sets verdicts[i] = true for every member of a passing sub-batch; splits failing ones: first
   * by units (their Miller products are reused), then a failing unit into one unit per proof.
   * `fails`: the sub-batch is known to fail, unchecked — its parent failed and the other half
   * passed (a batch of valid proofs always passes, so the failure is in this half). Only a check
   * that passed ever sets a verdict; says whether this sub-batch passed whole.
   */
  function bisect(units: readonly Unit[], verdicts: boolean[], fails = false): boolean {
    if (units.length === 0) return true;
    if (!fails && passes(units)) {
      for (const unit of units) for (const m of unit.members) verdicts[m.index] = true;
      return true;
    }
    if (units.length === 1) {
      const members = units[0]?.members ?? [];
      if (members.length > 1)
        bisect(
          members.map((m) => ({ members: [m], miller: millerOf([m]) })),
          verdicts,
          true,
        );
      return false;
    }
    const half = Math.ceil(units.length / 2);
    const firstPassed = bisect(units.slice(0, half), verdicts);
    bisect(units.slice(half), verdicts, firstPassed);
    return false;
  }

  return {
    verify(items) {
      const verdicts = items.map(() => false);
      const ready: Member[] = [];
      for (const [index, item] of items.entries()) {
        const prepared = prepare(item);
        if (prepared) ready.push({ index, prepared });
      }
      const units: Unit[] = [];
      const chunkSize = millerChunkSize(curve);
      for (let i = 0; i < ready.length; i += chunkSize) {
        const members = ready.slice(i, i + chunkSize);
        units.push({ members, miller: millerOf(members) });
      }
      bisect(units, verdicts);
      return verdicts;
    },
    get checks() {
      return checks;
    },
  };
}
