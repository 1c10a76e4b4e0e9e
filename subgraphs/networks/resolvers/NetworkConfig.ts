import { MAX_AGE } from "../../../core/max-age.ts";
import { cacheFor } from "../../kit/cache-hints.ts";
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
  indexing: async (network, _args, ctx) => {
    const [cursor, contracts] = await Promise.all([ctx.cursorByChain.load(Number(network.chainId)), ctx.contractsByChain.load(Number(network.chainId))]);
    return { cursor, confirmations: network.confirmations, deployBlock: contracts.find((c) => c.name === "BetVault")?.deployBlock ?? 0n };
  },
};
