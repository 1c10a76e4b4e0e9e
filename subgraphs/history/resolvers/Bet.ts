import { betDepth } from "../../../core/networks.ts";
import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import { betKey } from "../../../core/bet-key.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";

export const Bet: BetResolvers = {
  // Representations come from other subgraphs as raw JSON (`_Any`): check them like input.
  __resolveReference: (reference, ctx) => {
    let key: string;
    try {
      key = betKey(parseChainId(reference.chainId), parseUInt256(reference.betId));
    } catch {
      return null;
    }
    return ctx.betByKey.load(key);
  },
  network: (bet) => ({ chainId: bet.chainId }),
  confirmations: async (bet, _args, ctx) => betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).confirmations,
  finalized: async (bet, _args, ctx) => betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).finalized,
};
