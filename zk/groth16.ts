// Groth16 proofs of bet outcomes (circuit: zk/circuits/bet_outcome.circom).
//
// What the rest of the service uses:
//   - FIELD_MODULUS, clientSeedToField: the field mapping rules shared with the Solidity contract.
//   - serverSeedCommitment / computeOutcome: the circuit's two Poseidon hashes, in JS.
//   - proveBetOutcome: a real Groth16 proof with the committed DEV artifacts (zk/artifacts/).
//   - verifyBetProof / loadDevVerificationKey: verification that never throws.
//   - releaseProverResources: let Node exit (snarkjs keeps BN254 worker threads alive).
//
// publicSignals order: [outcome, serverSeedHash, betId, clientSeedField].
//
// Secrets: the server seed is an input of proveBetOutcome / serverSeedCommitment / computeOutcome
// only. It is never logged (this module logs nothing), never put in an error message and never
// returned.
//
// Loading this module builds circomlibjs' Poseidon once (top-level await, ~0.5 s) so that the
// hash functions can be synchronous.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildPoseidon } from "circomlibjs";
import * as snarkjs from "snarkjs";
import { FIELD_MODULUS, isWellFormedProof, type Groth16VerificationKey, type SnarkjsProof } from "./proof-shape.ts";

export { BASE_FIELD_MODULUS, FIELD_MODULUS, type Groth16VerificationKey, type SnarkjsProof } from "./proof-shape.ts";

/** Paths of the committed DEV-ONLY artifacts (see zk/artifacts/README.md). */
export const DEV_ARTIFACTS = {
  wasm: fileURLToPath(new URL("./artifacts/bet_outcome.wasm", import.meta.url)),
  zkey: fileURLToPath(new URL("./artifacts/bet_outcome.zkey", import.meta.url)),
  verificationKey: fileURLToPath(new URL("./artifacts/verification_key.json", import.meta.url)),
  solidityVerifier: fileURLToPath(new URL("./artifacts/Groth16Verifier.sol", import.meta.url)),
} as const;

export interface BetOutcomeInput {
  /** Private seed, 0 <= serverSeed < FIELD_MODULUS. Never logged or returned. */
  serverSeed: bigint;
  /** On-chain bet id, 0 <= betId < FIELD_MODULUS. */
  betId: bigint;
  /** The bet's bytes32 client seed as 0x hex (any case); mapped with clientSeedToField. */
  clientSeed: string;
}

export interface ProveBetOutcomeInput extends BetOutcomeInput {
  /**
   * Optional: the commitment recorded on-chain for this bet (bytes32 hex, any case). When given,
   * the seed must open it or proveBetOutcome rejects before proving.
   */
  serverSeedHash?: string;
}

export interface BetProof {
  /** Poseidon(serverSeed, betId, clientSeedField), decimal string. */
  outcome: string;
  /** Poseidon(serverSeed) as bytes32, lowercase 0x hex. */
  serverSeedHash: string;
  proof: SnarkjsProof;
  /** [outcome, serverSeedHash, betId, clientSeedField], decimal strings. */
  publicSignals: string[];
  /** snarkjs.groth16.exportSolidityCallData(proof, publicSignals), verbatim. */
  solidityCalldata: string;
}

/** Where proveBetOutcome finds the circuit and proving key (defaults: DEV_ARTIFACTS). */
export interface ProverArtifacts {
  wasm: string | Uint8Array;
  zkey: string | Uint8Array;
}

// ---------------------------------------------------------------------------------------------
// Field mapping

const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;

function isFieldElement(value: unknown): value is bigint {
  return typeof value === "bigint" && value >= 0n && value < FIELD_MODULUS;
}

/**
 * Client seed (bytes32, `0x` + 64 hex digits, any case) → field element:
 * `uint256(clientSeed) % FIELD_MODULUS`, the rule the Solidity contract applies too.
 */
export function clientSeedToField(clientSeedHex: string): bigint {
  if (typeof clientSeedHex !== "string" || !BYTES32_RE.test(clientSeedHex)) {
    throw new TypeError("clientSeed must be a bytes32 hex string (0x followed by 64 hex digits)");
  }
  return BigInt(clientSeedHex) % FIELD_MODULUS;
}

/** A field element as bytes32: lowercase `0x` + 64 hex digits. */
export function fieldToBytes32(value: bigint): `0x${string}` {
  if (!isFieldElement(value)) throw new RangeError("value must be a field element (0 <= x < p)");
  return `0x${value.toString(16).padStart(64, "0")}`;
}

function assertServerSeed(serverSeed: unknown): asserts serverSeed is bigint {
  // The message never includes the value.
  if (!isFieldElement(serverSeed)) throw new RangeError("serverSeed must be a bigint with 0 <= serverSeed < p");
}

function assertBetId(betId: unknown): asserts betId is bigint {
  if (!isFieldElement(betId)) {
    throw new RangeError("betId must be a bigint with 0 <= betId < p (the BN254 scalar field modulus)");
  }
}

function clientSeedField(clientSeed: string | bigint): bigint {
  if (typeof clientSeed === "bigint") {
    if (!isFieldElement(clientSeed)) throw new RangeError("clientSeed as a bigint must already be a field element");
    return clientSeed;
  }
  return clientSeedToField(clientSeed);
}

// ---------------------------------------------------------------------------------------------
// Poseidon (JS)

const poseidon = await buildPoseidon();
if (poseidon.F.p !== FIELD_MODULUS) throw new Error("circomlibjs Poseidon uses an unexpected field");

function poseidonHash(inputs: bigint[]): bigint {
  return poseidon.F.toObject(poseidon(inputs));
}

/** The public commitment to a server seed: Poseidon(serverSeed), as a field element. */
export function serverSeedCommitment(serverSeed: bigint): bigint {
  assertServerSeed(serverSeed);
  return poseidonHash([serverSeed]);
}

/**
 * The bet's outcome: Poseidon(serverSeed, betId, clientSeedField). `clientSeed` is either the
 * bytes32 hex string (mapped with clientSeedToField) or an already mapped field element.
 */
export function computeOutcome(input: { serverSeed: bigint; betId: bigint; clientSeed: string | bigint }): bigint {
  assertServerSeed(input.serverSeed);
  assertBetId(input.betId);
  return poseidonHash([input.serverSeed, input.betId, clientSeedField(input.clientSeed)]);
}

// ---------------------------------------------------------------------------------------------
// Proving / verifying

// Operations that use snarkjs' shared BN254 curve; releaseProverResources waits for them.
const inFlight = new Set<Promise<unknown>>();

function track<T>(promise: Promise<T>): Promise<T> {
  inFlight.add(promise);
  const done = (): void => {
    inFlight.delete(promise);
  };
  promise.then(done, done);
  return promise;
}

/**
 * Proves `outcome = Poseidon(serverSeed, betId, clientSeedField)` for the commitment
 * `Poseidon(serverSeed)` with a real Groth16 proof (snarkjs fullProve, in-process; ~0.3 s warm,
 * ~0.7 s cold). Uses the committed DEV artifacts unless `artifacts` is given.
 *
 * Rejects with RangeError/TypeError on invalid input, and with an Error when the seed does not open
 * `serverSeedHash` or proving fails. Error messages never contain the seed.
 */
export function proveBetOutcome(input: ProveBetOutcomeInput, artifacts: ProverArtifacts = DEV_ARTIFACTS): Promise<BetProof> {
  return track(prove(input, artifacts));
}

async function prove(input: ProveBetOutcomeInput, artifacts: ProverArtifacts): Promise<BetProof> {
  const { serverSeed, betId } = input;
  assertServerSeed(serverSeed);
  assertBetId(betId);
  const clientField = clientSeedToField(input.clientSeed);
  const commitment = serverSeedCommitment(serverSeed);
  if (input.serverSeedHash !== undefined) {
    if (typeof input.serverSeedHash !== "string" || !BYTES32_RE.test(input.serverSeedHash)) {
      throw new TypeError("serverSeedHash must be a bytes32 hex string (0x followed by 64 hex digits)");
    }
    if (BigInt(input.serverSeedHash) !== commitment) {
      throw new Error("the server seed does not open the given serverSeedHash");
    }
  }
  const outcome = poseidonHash([serverSeed, betId, clientField]);

  let result: { proof: snarkjs.Groth16ProofJson; publicSignals: string[] };
  try {
    result = await snarkjs.groth16.fullProve(
      {
        serverSeedHash: commitment.toString(),
        betId: betId.toString(),
        clientSeed: clientField.toString(),
        serverSeed: serverSeed.toString(),
      },
      artifacts.wasm,
      artifacts.zkey,
    );
  } catch (err) {
    // circom's witness errors name the failing template/line, never input values.
    throw new Error("bet outcome proof generation failed", { cause: err });
  }
  const { proof, publicSignals } = result;

  const expected = [outcome, commitment, betId, clientField].map(String);
  if (publicSignals.length !== expected.length || publicSignals.some((s, i) => s !== expected[i])) {
    throw new Error("prover artifacts do not match this module (unexpected publicSignals)");
  }

  return {
    outcome: outcome.toString(),
    serverSeedHash: fieldToBytes32(commitment),
    proof: {
      pi_a: [...proof.pi_a],
      pi_b: proof.pi_b.map((pair) => [...pair]),
      pi_c: [...proof.pi_c],
      protocol: proof.protocol,
      curve: proof.curve,
    },
    publicSignals,
    solidityCalldata: await snarkjs.groth16.exportSolidityCallData(proof, publicSignals),
  };
}

/**
 * Verifies a Groth16 proof against a verification key (snarkjs JSON). Resolves false, never
 * rejects, on a wrong proof or on malformed key / proof / publicSignals.
 */
export function verifyBetProof(verificationKey: object, proof: unknown, publicSignals: unknown): Promise<boolean> {
  return track(verify(verificationKey, proof, publicSignals));
}

async function verify(verificationKey: object, proof: unknown, publicSignals: unknown): Promise<boolean> {
  try {
    if (!isWellFormedProof(verificationKey, proof, publicSignals)) return false;
    return (await snarkjs.groth16.verify(verificationKey, publicSignals, proof)) === true;
  } catch {
    return false;
  }
}

/** The committed DEV verification key: the file's exact text (for hashing / serving) and its parse. */
export function loadDevVerificationKey(): { json: string; key: Groth16VerificationKey } {
  const json = readFileSync(DEV_ARTIFACTS.verificationKey, "utf8");
  return { json, key: JSON.parse(json) as Groth16VerificationKey };
}

/**
 * Terminates snarkjs' BN254 worker threads (`globalThis.curve_bn128.terminate()`), which otherwise
 * keep Node alive forever. Waits for proofs/verifications started through this module first.
 *
 * Call it once at shutdown (server close hook, end of a script, a test file's afterAll), never
 * while other code may still be proving or verifying with snarkjs. Proving or verifying again
 * afterwards works; it just rebuilds the curve (cold start, ~0.5 s).
 */
export async function releaseProverResources(): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  const holder = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
  await holder.curve_bn128?.terminate();
}
