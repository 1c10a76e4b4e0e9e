// Verifying a settled bet's Groth16 proof on the client, against the network's served verification
// key, with whichever snarkjs the platform has (Node: `import * as snarkjs from "snarkjs"`; a page:
// the browser build's global `snarkjs`). The service's own `proof.verified` is not consulted: the
// point is not to have to trust it.
import { FIELD_MODULUS, isWellFormedProof, type SnarkjsProof } from "./wire/proof-shape.ts";

/** snarkjs' `groth16` namespace (only `verify` is used). */
export interface Groth16Verify {
  verify(verificationKey: object, publicSignals: string[], proof: SnarkjsProof): Promise<boolean>;
}

/** The GraphQL fields a check needs (what BetWithProofQuery selects). */
export interface VerifiableBet {
  betId: string;
  clientSeed: string;
  serverSeedHash: string;
  result: {
    outcome: string;
    proof: { protocol: string; curve: string; piA: string[]; piB: string[][]; piC: string[]; publicSignals: string[] };
  } | null;
}

export type ProofCheck =
  | { verified: true }
  | { verified: false; reason: "not settled" | "malformed" | "signals do not match the bet" | "rejected by groth16.verify" };

/** API layout (piA, piB, piC) → snarkjs layout (pi_a, pi_b, pi_c). */
export function toSnarkjsProof(proof: { protocol: string; curve: string; piA: string[]; piB: string[][]; piC: string[] }): SnarkjsProof {
  return { pi_a: proof.piA, pi_b: proof.piB, pi_c: proof.piC, protocol: proof.protocol, curve: proof.curve };
}

/**
 * The public signals the circuit must have been proven for, from the bet's own fields:
 * `[outcome, serverSeedHash, betId, clientSeed mod p]` (zk/README.md). A valid proof of some other
 * bet verifies against the key just as well; binding it to this bet's fields is what makes it this
 * bet's proof.
 */
export function expectedPublicSignals(bet: { betId: string; clientSeed: string; serverSeedHash: string; outcome: string }): string[] {
  return [bet.outcome, BigInt(bet.serverSeedHash).toString(), bet.betId, (BigInt(bet.clientSeed) % FIELD_MODULUS).toString()];
}

export async function verifyBetProof(bet: VerifiableBet, verificationKeyJson: string, groth16: Groth16Verify): Promise<ProofCheck> {
  if (!bet.result) return { verified: false, reason: "not settled" };
  const { proof, outcome } = bet.result;
  let key: unknown;
  try {
    key = JSON.parse(verificationKeyJson);
  } catch {
    return { verified: false, reason: "malformed" };
  }
  const snarkProof = toSnarkjsProof(proof);
  if (!isWellFormedProof(key, snarkProof, proof.publicSignals)) return { verified: false, reason: "malformed" };
  const expected = expectedPublicSignals({ betId: bet.betId, clientSeed: bet.clientSeed, serverSeedHash: bet.serverSeedHash, outcome });
  if (expected.some((signal, i) => proof.publicSignals[i] !== signal)) return { verified: false, reason: "signals do not match the bet" };
  try {
    if ((await groth16.verify(key as object, proof.publicSignals, snarkProof)) === true) return { verified: true };
  } catch {
    // snarkjs throws on points off the curve; that is a rejection like any other.
  }
  return { verified: false, reason: "rejected by groth16.verify" };
}
