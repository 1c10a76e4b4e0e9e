import { MAX_AGE } from "../../../core/max-age.ts";
import { cacheFor } from "../../kit/cache-hints.ts";
import type { HistoryContext } from "../context.ts";
import type { NetworkConfigResolvers } from "../generated/resolvers-types.ts";
import type { NetworkRefModel, NetworkSettings } from "../mappers.ts";

// The networks subgraph's settings of a bet's network, shared (history.graphql): from the page's
// join, else one batched read of "Network". Hinted as the networks subgraph hints a network
// (MAX_AGE.settings), only when asked, as its entity fetch was made only then.

async function settingsOf(network: NetworkRefModel, ctx: HistoryContext): Promise<NetworkSettings> {
  const settings = await ctx.networkByChain.load(Number(network.chainId));
  // Bet rows reference their network (a foreign key): a miss is a broken invariant.
  if (!settings) throw new Error(`no Network row for chain ${network.chainId}`);
  return settings;
}

export const NetworkConfig: NetworkConfigResolvers = {
  name: (network, _args, ctx, info) => {
    cacheFor(info, MAX_AGE.settings);
    return network.name ?? settingsOf(network, ctx).then((settings) => settings.name);
  },
  confirmations: (network, _args, ctx, info) => {
    cacheFor(info, MAX_AGE.settings);
    return network.confirmations ?? settingsOf(network, ctx).then((settings) => settings.confirmations);
  },
};
