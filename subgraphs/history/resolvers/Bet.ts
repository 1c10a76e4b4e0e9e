import { MAX_AGE } from "../../../core/max-age.ts";
import { betMaxAge, cacheFor } from "../../kit/cache-hints.ts";
import { betDepth } from "../../../core/networks.ts";
import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import { betKey } from "../../kit/bet-key.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";

export const Bet: BetResolvers = {
  // Representations come from other subgraphs as raw JSON (`_Any`): check them like input.
  __resolveReference: async (reference, ctx, info) => {
    let key: string;
    try {
      key = betKey(parseChainId(reference.chainId), parseUInt256(reference.betId));
    } catch {
      return null;
    }
    const bet = await ctx.betByKey.load(key);
    cacheFor(info, bet ? await betMaxAge(ctx.networks, bet) : MAX_AGE.live);
    return bet;
  },
  network: (bet, _args, _ctx, info) => {
    cacheFor(info, MAX_AGE.final);
    return { chainId: bet.chainId };
  },
  confirmations: async (bet, _args, ctx, info) => {
    cacheFor(info, MAX_AGE.live); // grows with every block, final or not
    return betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).confirmations;
  },
  finalized: async (bet, _args, ctx) => betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).finalized,
};
