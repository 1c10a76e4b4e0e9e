import type { NetworkConfigResolvers } from "../generated/resolvers-types.ts";

export const NetworkConfig: NetworkConfigResolvers = {
  __resolveReference: (reference, ctx) => ctx.networkById.load(Number(reference.chainId)),
  verificationKey: (network) => network,
  indexing: (network) => network,
};
