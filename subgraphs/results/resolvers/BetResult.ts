import { MAX_AGE } from "../../../core/max-age.ts";
import { cacheFor } from "../../kit/cache-hints.ts";
import type { BetResultResolvers } from "../generated/resolvers-types.ts";

// Groth16Proof has no resolvers: its row comes shaped as the API serves it (mappers.ts).
export const BetResult: BetResultResolvers = {
  // A result's proof never changes; whether the result itself stays is hinted on Bet.result.
  proof: (row, _args, _ctx, info) => {
    cacheFor(info, MAX_AGE.final);
    return row.proof;
  },
};
