// How far a network's backfill has got: one rule for the indexer's progress log line and metrics,
// the health report and IndexingStatus.backfillProgress, so the three never disagree. Backfill runs
// from the block before the BetVault deploy block (where the cursor starts) to the finalized block
// (core/finality.ts). Pure, like finality.ts.

/** Where the cursor starts: the block before the deploy block (0 for a deploy block of 0). */
export function backfillStartBlock(deployBlock: bigint): bigint {
  return deployBlock > 0n ? deployBlock - 1n : 0n;
}

export interface BackfillRange {
  startBlock: bigint;
  targetBlock: bigint;
  indexedBlock: bigint;
}

const MILLIONTHS = 1_000_000n;

/** The done share of (startBlock, targetBlock], 0..1 in millionths (rounded down); an empty range is done. */
export function backfillRatio({ startBlock, targetBlock, indexedBlock }: BackfillRange): number {
  const total = targetBlock - startBlock;
  const done = indexedBlock - startBlock;
  if (total <= 0n || done >= total) return 1;
  return done <= 0n ? 0 : Number((done * MILLIONTHS) / total) / Number(MILLIONTHS);
}

/** A ratio as a percentage with one decimal, rounded down ("99.9" until the target is reached). */
export function backfillPercent(ratio: number): string {
  const permille = Math.floor(Math.round(ratio * Number(MILLIONTHS)) / 1000);
  return `${Math.floor(permille / 10)}.${permille % 10}`;
}
