import { backfillRatio, backfillStartBlock } from "../../../core/backfill.ts";
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
    // The share finalizedBlock answers, by the one rule the indexer's log line and /health use.
    return backfillRatio({
      startBlock: backfillStartBlock(deployBlock),
      targetBlock: finalizedBlockAt(cursor.headBlock, confirmations),
      indexedBlock: cursor.indexedBlock,
    });
  },
  updatedAt: ({ cursor }) => cursor?.updatedAt.toISOString() ?? NEVER,
};
