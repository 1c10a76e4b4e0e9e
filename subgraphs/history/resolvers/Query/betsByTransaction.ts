import { betsInTransaction } from "../../data.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

export const betsByTransaction: QueryResolvers["betsByTransaction"] = async (_parent, { chainId, txHash }, ctx) => {
  await ctx.networks.require(chainId);
  // The Bytes32 scalar already lowercased the hash, as the indexer stores it; lowercase again
  // for callers that reach the resolver without the scalar (tests, benches).
  return betsInTransaction(ctx.db, chainId, txHash.toLowerCase());
};
