import type { IndexingStatusResolvers } from "../generated/resolvers-types.ts";

// A network registered before its indexer first wrote has no cursor yet: it reports block 0, not ready.
const NEVER = new Date(0).toISOString();

export const IndexingStatus: IndexingStatusResolvers = {
  indexedBlock: ({ cursor }) => cursor?.indexedBlock ?? 0n,
  headBlock: ({ cursor }) => cursor?.headBlock ?? 0n,
  finalizedBlock: ({ cursor }) => cursor?.finalizedBlock ?? 0n,
  lagBlocks: (status) => {
    const cursor = status.cursor;
    if (!cursor || cursor.headBlock <= cursor.indexedBlock) return 0;
    const lag = cursor.headBlock - cursor.indexedBlock;
    return lag > 2_147_483_647n ? 2_147_483_647 : Number(lag);
  },
  isReady: ({ cursor }) => cursor?.isReady ?? false,
  updatedAt: ({ cursor }) => cursor?.updatedAt.toISOString() ?? NEVER,
};
