import { countPendingBets } from "../../data.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

export const pendingBetCount: QueryResolvers["pendingBetCount"] = async (_parent, { wallet, chainId }, ctx) => {
  if (chainId != null) await ctx.networks.require(chainId);
  return countPendingBets(ctx.db, wallet, chainId ?? undefined);
};
