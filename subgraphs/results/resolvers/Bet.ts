import { MAX_AGE } from "../../../core/max-age.ts";
import { betMaxAgeAt, cacheFor } from "../../kit/cache-hints.ts";
import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import { refKey } from "../context.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";
import type { BetRefModel } from "../mappers.ts";

export const Bet: BetResolvers = {
  // Representations come from other subgraphs as raw JSON (`_Any`): check them like input.
  __resolveReference: (reference, _ctx, info) => {
    cacheFor(info, MAX_AGE.final); // the reference is only ids: its fields hint for themselves
    try {
      return { chainId: parseChainId(reference.chainId), betId: parseUInt256(reference.betId) } satisfies BetRefModel;
    } catch {
      return null;
    }
  },
  result: async (ref, _args, ctx, info) => {
    const bet = await ctx.betWithResult.load(refKey(ref));
    if (!bet) {
      cacheFor(info, MAX_AGE.live);
      return null;
    }
    // The network snapshot in hand when fresh: one await per bet, not three.
    const networks = ctx.networks.fresh() ?? (await ctx.networks.all());
    cacheFor(info, betMaxAgeAt(networks.get(ref.chainId), bet));
    return bet.result;
  },
};
