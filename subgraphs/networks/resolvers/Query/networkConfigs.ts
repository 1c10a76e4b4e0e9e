import { cacheFor, MAX_AGE } from "../../../../core/cache-hints.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

export const networkConfigs: QueryResolvers["networkConfigs"] = async (_parent, { chainId }, ctx, info) => {
  cacheFor(info, MAX_AGE.settings); // `indexing` keeps its default, live
  if (chainId != null) {
    await ctx.networks.require(chainId);
    const row = await ctx.networkById.load(chainId);
    return row ? [row] : [];
  }
  return ctx.db.prisma.network.findMany({ orderBy: { chainId: "asc" } });
};
