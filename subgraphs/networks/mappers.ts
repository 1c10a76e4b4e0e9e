import type { Prisma } from "../../prisma/generated/client.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
export const networkConfigInclude = { contracts: { orderBy: { name: "asc" } }, cursor: true } satisfies Prisma.NetworkInclude;
export type NetworkConfigModel = Prisma.NetworkGetPayload<{ include: typeof networkConfigInclude }>;
export type ContractAddressModel = NetworkConfigModel["contracts"][number];
export type IndexingStatusModel = NetworkConfigModel;
