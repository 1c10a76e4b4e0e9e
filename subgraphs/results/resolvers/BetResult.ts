import type { BetResultResolvers, Groth16ProofResolvers } from "../generated/resolvers-types.ts";

export const BetResult: BetResultResolvers = {
  proof: (row) => row,
};

export const Groth16Proof: Groth16ProofResolvers = {
  protocol: (row) => row.proof.protocol,
  curve: (row) => row.proof.curve,
  piA: (row) => row.proof.pi_a,
  piB: (row) => row.proof.pi_b,
  piC: (row) => row.proof.pi_c,
  publicSignals: (row) => row.publicSignals,
  solidityCalldata: (row) => row.solidityCalldata,
  verified: (row) => row.verified,
};
