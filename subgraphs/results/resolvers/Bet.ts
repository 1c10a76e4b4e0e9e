import { MAX_AGE } from "../../../core/max-age.ts";
import { cacheFor } from "../../kit/cache-hints.ts";
import { hintedResult } from "../../kit/bet-result.ts";
import { mayAskFor } from "../../kit/selection.ts";
import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import type { GraphQLResolveInfo } from "graphql";
import { refKey, type ResultsContext } from "../context.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";
import type { BetRefModel, BetResultModel } from "../mappers.ts";

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
  // A row read by the parent field answers (100 bets a `betResults` answer) without a second read,
  // hinted as the parent worked it out for that bet.
  result: (ref, _args, ctx, info) => {
    if (!ref.loaded) return loadedResult(ref, ctx, info);
    cacheFor(info, ref.loaded.maxAge);
    return ref.loaded.row.result;
  },
};

async function loadedResult(ref: BetRefModel, ctx: ResultsContext, info: GraphQLResolveInfo): Promise<BetResultModel | null> {
  ctx.resultReads.solidityCalldata = mayAskFor(info, "solidityCalldata");
  const bet = await ctx.betWithResult.load(refKey(ref));
  if (!bet) {
    cacheFor(info, MAX_AGE.live);
    return null;
  }
  return hintedResult(info, ctx.networks, bet, bet.result);
}
