// What the indexer reports of each network, in commit order (createIndexer's `onEvent`): metrics,
// logs and tests read these.
import type { BackfillProgress } from "./progress.ts";
import type { IndexerError } from "./errors.ts";

export type IndexerEvent =
  // `finalized`: FINALIZED updates the commit appended after its events' own (bets its head made final).
  | { type: "block"; chainId: number; mode: "backfill" | "follow"; fromBlock: bigint; toBlock: bigint; events: number; headBlock: bigint; finalized: number }
  | { type: "reorg"; chainId: number; ancestor: bigint; depth: number; removed: string[]; reverted: string[] }
  | { type: "finalize"; chainId: number; finalizedBlock: bigint }
  /** FINALIZED updates appended by a head advance without new blocks (the cursor's refresh). */
  | { type: "finalized"; chainId: number; updates: number }
  | { type: "ready"; chainId: number; block: bigint }
  | { type: "progress"; chainId: number; progress: BackfillProgress }
  | { type: "reset"; chainId: number; removed: number; reason: string }
  /** Settled proofs of a commit that fail under the served key (the chain's verifier accepted them). */
  | { type: "rejected-proofs"; chainId: number; betIds: string[] }
  | { type: "error"; chainId: number; error: IndexerError; attempt: number; delayMs: number }
  | { type: "fatal"; chainId: number; error: IndexerError };
