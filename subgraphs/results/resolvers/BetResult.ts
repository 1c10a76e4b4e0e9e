import { MAX_AGE } from "../../../core/max-age.ts";
import { cacheFor } from "../../kit/cache-hints.ts";
import type { BetResultResolvers, Groth16ProofResolvers } from "../generated/resolvers-types.ts";

export const BetResult: BetResultResolvers = {
  // A result's proof never changes; whether the result itself stays is hinted on Bet.result.
  proof: (row, _args, _ctx, info) => {
    cacheFor(info, MAX_AGE.final);
    return row;
  },
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
