import type { Contract, IndexingCursor, Network } from "../../prisma/generated/client.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
export type NetworkConfigModel = Network;
export type ContractAddressModel = Contract;
/** The cursor (null for a network whose indexer has not written yet), the network's finality depth and where BetVault was deployed. */
export type IndexingStatusModel = { cursor: IndexingCursor | null; confirmations: number; deployBlock: bigint };
