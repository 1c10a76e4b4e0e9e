import { scalarResolvers } from "../../../core/scalars.ts";
import type { Resolvers } from "../generated/resolvers-types.ts";
import { IndexingStatus } from "./IndexingStatus.ts";
import { NetworkConfig } from "./NetworkConfig.ts";
import { networkConfigs } from "./Query/networkConfigs.ts";
import { readAt } from "./Query/readAt.ts";
import { VerificationKey } from "./VerificationKey.ts";

export const resolvers: Resolvers = {
  ...scalarResolvers,
  Query: { networkConfigs, readAt },
  NetworkConfig,
  VerificationKey,
  IndexingStatus,
};
