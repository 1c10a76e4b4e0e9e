import { ChainIdScalar, UInt256Scalar } from "../../../core/scalars.ts";
import type { Resolvers } from "../generated/resolvers-types.ts";
import { Bet } from "./Bet.ts";
import { betResult, betResults } from "./Query/betResults.ts";
import { fairnessStats } from "./Query/fairnessStats.ts";

export const resolvers: Resolvers = {
  ChainId: ChainIdScalar,
  UInt256: UInt256Scalar,
  Query: { betResult, betResults, fairnessStats },
  Bet,
};
