import { MAX_AGE } from "../../../../core/max-age.ts";
import { cacheFor } from "../../../kit/cache-hints.ts";
import { allNetworks } from "../../data.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

export const networkConfigs: QueryResolvers["networkConfigs"] = async (_parent, { chainId }, ctx, info) => {
  cacheFor(info, MAX_AGE.settings); // `indexing` keeps its default, live
  if (chainId != null) {
    await ctx.networks.require(chainId);
    const row = await ctx.networkById.load(chainId);
    return row ? [row] : [];
  }
  return allNetworks(ctx.db);
};
