import { MAX_AGE } from "../../../core/max-age.ts";
import { betMaxAgeAt, cacheFor } from "../../kit/cache-hints.ts";
import { mayAskFor } from "../../kit/selection.ts";
import { parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import type { GraphQLResolveInfo } from "graphql";
import type { NetworkEntry } from "../../../core/networks.ts";
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
  result: (ref, _args, ctx, info) => {
    const loaded = ref.loaded;
    if (!loaded) return loadedResult(ref, ctx, info);
    // A row read by the parent field answers (100 bets a `betResults` answer): with no promise
    // while the network snapshot is fresh; else once the snapshot is, never by a second read.
    const answer = (networks: Map<number, NetworkEntry>) => {
      cacheFor(info, betMaxAgeAt(networks.get(ref.chainId), loaded));
      return loaded.result;
    };
    const networks = ctx.networks.fresh();
    return networks ? answer(networks) : ctx.networks.all().then(answer);
  },
};

async function loadedResult(ref: BetRefModel, ctx: ResultsContext, info: GraphQLResolveInfo): Promise<BetResultModel | null> {
  ctx.resultReads.solidityCalldata = mayAskFor(info, "solidityCalldata");
  const bet = await ctx.betWithResult.load(refKey(ref));
  if (!bet) {
    cacheFor(info, MAX_AGE.live);
    return null;
  }
  // The network snapshot in hand when fresh: one await per bet, not three.
  const networks = ctx.networks.fresh() ?? (await ctx.networks.all());
  cacheFor(info, betMaxAgeAt(networks.get(ref.chainId), bet));
  return bet.result;
}
