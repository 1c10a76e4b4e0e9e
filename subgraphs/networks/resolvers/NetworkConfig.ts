import { cacheFor, MAX_AGE } from "../../../core/cache-hints.ts";
import type { NetworkConfigResolvers } from "../generated/resolvers-types.ts";

export const NetworkConfig: NetworkConfigResolvers = {
  __resolveReference: (reference, ctx, info) => {
    cacheFor(info, MAX_AGE.settings);
    return ctx.networkById.load(Number(reference.chainId));
  },
  contracts: (network, _args, ctx, info) => {
    cacheFor(info, MAX_AGE.settings);
    return ctx.contractsByChain.load(Number(network.chainId));
  },
  verificationKey: (network, _args, _ctx, info) => {
    cacheFor(info, MAX_AGE.settings);
    return network;
  },
  indexing: async (network, _args, ctx) => ({ cursor: await ctx.cursorByChain.load(Number(network.chainId)) }),
};
