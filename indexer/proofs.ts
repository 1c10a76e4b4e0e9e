/**
 * Settlement proofs at index time: the snarkjs proof is rebuilt from the BetSettled event
 * (chain/betvault.ts: toSnarkjsProof, publicSignalsOf), its Solidity calldata is snarkjs's own
 * export, and it is verified against the network's verification key (zk/groth16.ts).
 *
 * Before the pairing check, a curve check in plain bigint arithmetic rejects proofs whose points
 * are not on BN254 (microseconds instead of ~10 ms inside snarkjs, which would reject them too):
 * it changes no verdict, only what a garbage proof costs. Verdicts are memoised per
 * (key, proof, signals), so a block re-indexed after a reorg is not verified twice.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Hex } from "viem";
import * as snarkjs from "snarkjs";
import { publicSignalsOf, toSnarkjsProof } from "../chain/betvault.ts";
import { BASE_FIELD_MODULUS as Q, verifyBetProof, type Groth16VerificationKey, type SnarkjsProof } from "../zk/groth16.ts";
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

export interface ProofVerifier {
  verify(proof: SnarkjsProof, publicSignals: string[]): Promise<boolean>;
}

/** A verifier for one key, with a bounded memo of verdicts. */
export function createProofVerifier(vk: VerificationKeyFile, memoSize = 10_000): ProofVerifier {
  const memo = new Map<string, boolean>();
  return {
    async verify(proof, publicSignals) {
      if (!proofPointsOnCurve(proof)) return false;
      const id = `${proof.pi_a.join(",")}|${proof.pi_b.flat().join(",")}|${proof.pi_c.join(",")}|${publicSignals.join(",")}`;
      const known = memo.get(id);
      if (known !== undefined) return known;
      const verdict = await verifyBetProof(vk.key, proof, publicSignals);
      if (memo.size >= memoSize) memo.delete(memo.keys().next().value ?? "");
      memo.set(id, verdict);
      return verdict;
    },
  };
}

/** What BetResult stores about a settlement's proof. */
export interface SettlementProof {
  proof: SnarkjsProof;
  publicSignals: string[];
  solidityCalldata: string;
  verified: boolean;
}

/**
 * The proof of a BetSettled event, as snarkjs lays it out, with the public signals the contract
 * itself built from the stored bet, snarkjs's calldata export, and the verdict under `verifier`.
 */
export async function settlementProof(
  event: BetSettledEvent,
  bet: { serverSeedHash: Hex; clientSeed: Hex },
  verifier: ProofVerifier,
): Promise<SettlementProof> {
  const proof = toSnarkjsProof(event.proof);
  const publicSignals = publicSignalsOf({ outcome: event.outcome, serverSeedHash: bet.serverSeedHash, betId: event.betId, clientSeed: bet.clientSeed });
  const [solidityCalldata, verified] = await Promise.all([snarkjs.groth16.exportSolidityCallData(proof, publicSignals), verifier.verify(proof, publicSignals)]);
  return { proof, publicSignals, solidityCalldata, verified };
}
