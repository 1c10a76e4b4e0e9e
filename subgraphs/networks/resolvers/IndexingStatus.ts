import { finalizedBlockAt } from "../../../core/finality.ts";
import type { IndexingStatusResolvers } from "../generated/resolvers-types.ts";

// A network registered before its indexer first wrote has no cursor yet: it reports block 0, not ready.
const NEVER = new Date(0).toISOString();

export const IndexingStatus: IndexingStatusResolvers = {
  indexedBlock: ({ cursor }) => cursor?.indexedBlock ?? 0n,
  headBlock: ({ cursor }) => cursor?.headBlock ?? 0n,
  // The one rule (core/finality.ts) at the same head Bet.finalized uses: the newest block whose changes are final.
  finalizedBlock: ({ cursor, confirmations }) => (cursor ? finalizedBlockAt(cursor.headBlock, confirmations) : 0n),
  lagBlocks: (status) => {
    const cursor = status.cursor;
    if (!cursor || cursor.headBlock <= cursor.indexedBlock) return 0;
    const lag = cursor.headBlock - cursor.indexedBlock;
    return lag > 2_147_483_647n ? 2_147_483_647 : Number(lag);
  },
  isReady: ({ cursor }) => cursor?.isReady ?? false,
  backfillProgress: ({ cursor, confirmations, deployBlock }) => {
    if (!cursor) return 0;
    if (cursor.isReady) return 1;
    // From the block before the deploy block (where the cursor starts) to the finalized block,
    // by the one rule (core/finality.ts) at the recorded head, as finalizedBlock answers.
    const start = deployBlock > 0n ? deployBlock - 1n : 0n;
    const total = finalizedBlockAt(cursor.headBlock, confirmations) - start;
    const done = cursor.indexedBlock - start;
    if (total <= 0n || done >= total) return 1;
    return done <= 0n ? 0 : Number((done * 1_000_000n) / total) / 1_000_000;
  },
  updatedAt: ({ cursor }) => cursor?.updatedAt.toISOString() ?? NEVER,
};
