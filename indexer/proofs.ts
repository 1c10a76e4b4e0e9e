/**
 * Settlement proofs at index time: the snarkjs proof is rebuilt from the BetSettled event
 * (chain/betvault.ts: toSnarkjsProof, publicSignalsOf), its Solidity calldata is snarkjs's own
 * export, and it is verified against the network's verification key: the settlements of a commit
 * together, as batches in a pool of worker threads (zk/batch-verify.ts, zk/verify-pool.ts).
 *
 * Before the pairing check, a curve check in plain bigint arithmetic rejects proofs whose points
 * are not on BN254 (microseconds instead of ~10 ms inside snarkjs, which would reject them too):
 * it changes no verdict, only what a garbage proof costs (and keeps garbage out of the batches,
 * where a failing member costs a bisection). Verdicts are memoised per
 * (key, proof, signals), so a block re-indexed after a reorg is not verified twice.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Hex } from "viem";
import * as snarkjs from "snarkjs";
import { publicSignalsOf, toSnarkjsProof } from "../chain/betvault.ts";
import { BASE_FIELD_MODULUS as Q, type Groth16VerificationKey, type SnarkjsProof } from "../zk/groth16.ts";
import { createVerifyPool } from "../zk/verify-pool.ts";
import { IndexerConfigError } from "./errors.ts";
import type { BetSettledEvent } from "./events.ts";

export interface VerificationKeyFile {
  /** The file's exact text: what Network.verificationKeyJson stores and `sha256` covers. */
  json: string;
  /** `0x` + sha256 hex of `json`. */
  sha256: Hex;
  key: Groth16VerificationKey;
}

export function loadVerificationKey(path: string): VerificationKeyFile {
  let json: string;
  try {
    json = readFileSync(path, "utf8");
  } catch (error) {
    throw new IndexerConfigError(`cannot read the verification key ${path}`, { cause: error });
  }
  let key: Groth16VerificationKey;
  try {
    key = JSON.parse(json) as Groth16VerificationKey;
  } catch (error) {
    throw new IndexerConfigError(`the verification key ${path} is not JSON`, { cause: error });
  }
  if (key.protocol !== "groth16" || key.curve !== "bn128" || !Array.isArray(key.IC) || key.IC.length !== key.nPublic + 1) {
    throw new IndexerConfigError(`the verification key ${path} is not a groth16/bn128 key`);
  }
  return { json, sha256: `0x${createHash("sha256").update(json).digest("hex")}`, key };
}

// ------------------------------------------------------------------------------ curve checks

const mod = (a: bigint) => ((a % Q) + Q) % Q;
/** b of the G2 twist y² = x³ + b', b' = 3 / (9 + u), as (c0, c1). */
const TWIST_B: readonly [bigint, bigint] = [
  19485874751759354771024239261021720505790618469301721065564631296452457478373n,
  266929791119991161246907387137283842545076965332900288569378510910307636690n,
];

function fq2Mul(a: readonly [bigint, bigint], b: readonly [bigint, bigint]): [bigint, bigint] {
  return [mod(a[0] * b[0] - a[1] * b[1]), mod(a[0] * b[1] + a[1] * b[0])];
}

const inField = (v: bigint) => v >= 0n && v < Q;

/** (x, y) on y² = x³ + 3 over Fq. */
export function isOnG1(x: bigint, y: bigint): boolean {
  return inField(x) && inField(y) && mod(y * y) === mod(x * x * x + 3n);
}

/** (x, y) in Fq2 ([c0, c1] each) on the twist y² = x³ + b'. */
export function isOnG2(x: readonly [bigint, bigint], y: readonly [bigint, bigint]): boolean {
  if (![...x, ...y].every(inField)) return false;
  const lhs = fq2Mul(y, y);
  const x3 = fq2Mul(fq2Mul(x, x), x);
  return lhs[0] === mod(x3[0] + TWIST_B[0]) && lhs[1] === mod(x3[1] + TWIST_B[1]);
}

/** True when every point of a snarkjs proof (affine, z = 1) lies on its curve. */
export function proofPointsOnCurve(proof: SnarkjsProof): boolean {
  /** The first two coordinates of a point (or an Fq2 element), or undefined when missing. */
  const pair = (values: readonly string[] | undefined): [bigint, bigint] | undefined =>
    values?.[0] !== undefined && values[1] !== undefined ? [BigInt(values[0]), BigInt(values[1])] : undefined;
  const a = pair(proof.pi_a);
  const c = pair(proof.pi_c);
  const bx = pair(proof.pi_b[0]);
  const by = pair(proof.pi_b[1]);
  if (!a || !c || !bx || !by) return false;
  return isOnG1(...a) && isOnG1(...c) && isOnG2(bx, by);
}

// ------------------------------------------------------------------------------- verification

export interface ProofToVerify {
  proof: SnarkjsProof;
  publicSignals: string[];
}

export interface ProofVerifier {
  verify(proof: SnarkjsProof, publicSignals: string[]): Promise<boolean>;
  /** One verdict per item, in order: the items not memoised go to the pool as one batch. */
  verifyMany(items: readonly ProofToVerify[]): Promise<boolean[]>;
  /** Starts the pool's workers ahead of the first proofs (their boot overlaps the indexer's start-up). */
  warm?(): Promise<void>;
  /** Stops the pool's workers (a later call starts new ones). */
  close(): Promise<void>;
  /** True for a verifier that checks nothing (benchmarks only): its verdicts take no time, so nothing is pipelined for it. */
  checksNothing?: boolean;
}

export interface ProofVerifierOptions {
  /** Worker threads verifying batches (zk/verify-pool.ts); 0 verifies on this thread. Default: the cores. */
  workers?: number;
  memoSize?: number;
}

const memoKey = ({ proof, publicSignals }: ProofToVerify) =>
  `${proof.pi_a.join(",")}|${proof.pi_b.flat().join(",")}|${proof.pi_c.join(",")}|${publicSignals.join(",")}`;

/**
 * Benchmarks only (the like-for-like backfill row against an indexer that checks no proofs): every
 * verdict is false, so every settlement is stored `verified: false` and clients see it unchecked.
 * Production configuration refuses the setting that selects it (core/config.ts).
 */
export function skippedProofVerifier(): ProofVerifier {
  return {
    verify: async () => false,
    verifyMany: async (items) => items.map(() => false),
    close: async () => undefined,
    checksNothing: true,
  };
}

/**
 * A verifier for one key: batch verification (zk/batch-verify.ts) in a worker pool, with a bounded
 * memo of verdicts. Each verdict is the proof's own: a batch that fails is bisected in the worker.
 */
export function createProofVerifier(vk: VerificationKeyFile, options: ProofVerifierOptions = {}): ProofVerifier {
  const memoSize = options.memoSize ?? 10_000;
  const memo = new Map<string, boolean>();
  const pool = createVerifyPool(vk.key, { workers: options.workers ?? availableParallelism() });
  const remember = (id: string, verdict: boolean) => {
    if (memo.size >= memoSize) memo.delete(memo.keys().next().value ?? "");
    memo.set(id, verdict);
  };
  const verifyMany = async (items: readonly ProofToVerify[]): Promise<boolean[]> => {
    const verdicts = new Array<boolean>(items.length).fill(false);
    const pending = new Map<string, number[]>();
    for (const [i, item] of items.entries()) {
      if (!proofPointsOnCurve(item.proof)) continue;
      const id = memoKey(item);
      const known = memo.get(id);
      if (known !== undefined) verdicts[i] = known;
      else pending.set(id, [...(pending.get(id) ?? []), i]);
    }
    const ids = [...pending.keys()];
    const fresh = await pool.verify(ids.map((id) => items[pending.get(id)?.[0] ?? 0] as ProofToVerify));
    for (const [k, id] of ids.entries()) {
      const verdict = fresh[k] === true;
      remember(id, verdict);
      for (const i of pending.get(id) ?? []) verdicts[i] = verdict;
    }
    return verdicts;
  };
  return {
    async verify(proof, publicSignals) {
      return (await verifyMany([{ proof, publicSignals }]))[0] === true;
    },
    verifyMany,
    warm: async () => {
      await pool.warm();
    },
    close: () => pool.close(),
  };
}

/** What BetResult stores about a settlement's proof. */
export interface SettlementProof {
  proof: SnarkjsProof;
  publicSignals: string[];
  solidityCalldata: string;
  verified: boolean;
}

type SettlementInput = { event: BetSettledEvent; bet: { serverSeedHash: Hex; clientSeed: Hex } };

/**
 * The proof of a BetSettled event, as snarkjs lays it out, with the public signals the contract
 * itself built from the stored bet, snarkjs's calldata export, and the verdict under `verifier`.
 */
export async function settlementProof(event: BetSettledEvent, bet: SettlementInput["bet"], verifier: ProofVerifier): Promise<SettlementProof> {
  const [one] = await settlementProofs([{ event, bet }], verifier);
  if (!one) throw new Error("settlementProofs returned nothing");
  return one;
}

/** settlementProof for many settlements (a block range), verified together as one batch. */
export async function settlementProofs(inputs: readonly SettlementInput[], verifier: ProofVerifier): Promise<SettlementProof[]> {
  const items = inputs.map(({ event, bet }) => ({
    proof: toSnarkjsProof(event.proof),
    publicSignals: publicSignalsOf({ outcome: event.outcome, serverSeedHash: bet.serverSeedHash, betId: event.betId, clientSeed: bet.clientSeed }),
  }));
  const [calldata, verdicts] = await Promise.all([
    Promise.all(items.map((item) => snarkjs.groth16.exportSolidityCallData(item.proof, item.publicSignals))),
    verifier.verifyMany(items),
  ]);
  return items.map((item, i) => ({ ...item, solidityCalldata: calldata[i] ?? "", verified: verdicts[i] === true }));
}
