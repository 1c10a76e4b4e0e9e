import type { BetResultResolvers, Groth16ProofResolvers } from "../generated/resolvers-types.ts";
import type { SnarkjsProof } from "../mappers.ts";

const proofOf = (row: { proof: unknown }) => row.proof as SnarkjsProof;

export const BetResult: BetResultResolvers = {
  proof: (row) => row,
};

export const Groth16Proof: Groth16ProofResolvers = {
  protocol: (row) => proofOf(row).protocol,
  curve: (row) => proofOf(row).curve,
  piA: (row) => proofOf(row).pi_a,
  piB: (row) => proofOf(row).pi_b,
  piC: (row) => proofOf(row).pi_c,
  publicSignals: (row) => row.publicSignals,
  solidityCalldata: (row) => row.solidityCalldata,
  verified: (row) => row.verified,
};
