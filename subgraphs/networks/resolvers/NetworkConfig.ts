import type { NetworkConfigResolvers } from "../generated/resolvers-types.ts";

export const NetworkConfig: NetworkConfigResolvers = {
  __resolveReference: (reference, ctx) => ctx.networkById.load(Number(reference.chainId)),
  contracts: (network, _args, ctx) => ctx.contractsByChain.load(Number(network.chainId)),
  verificationKey: (network) => network,
  indexing: async (network, _args, ctx) => ({ cursor: await ctx.cursorByChain.load(Number(network.chainId)) }),
};
