import type { Contract, IndexingCursor, Network } from "../../prisma/generated/client.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
export type NetworkConfigModel = Network;
export type ContractAddressModel = Contract;
/** The cursor, or null for a network whose indexer has not written yet. */
export type IndexingStatusModel = { cursor: IndexingCursor | null };
