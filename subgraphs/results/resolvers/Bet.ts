import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import { refKey } from "../context.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";
import type { BetRefModel } from "../mappers.ts";

export const Bet: BetResolvers = {
  // Representations come from other subgraphs as raw JSON (`_Any`): check them like input.
  __resolveReference: (reference) => {
    try {
      return { chainId: parseChainId(reference.chainId), betId: parseUInt256(reference.betId) } satisfies BetRefModel;
    } catch {
      return null;
    }
  },
  result: async (ref, _args, ctx) => (await ctx.betWithResult.load(refKey(ref)))?.result ?? null,
};
