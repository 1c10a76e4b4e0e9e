// Resolvers receive rows; these are the shapes, named after the GraphQL types they back.
import type { BetResultModel } from "../kit/bet-result.ts";

/** A bet known to exist; its result is loaded (batched) only when asked for. */
export interface BetRefModel {
  chainId: number;
  betId: string;
  /**
   * The bet's row when the parent field has already read it (`betResults`), with the hint its
   * `result` gives (kit/cache-hints.ts betMaxAgeAt, worked out with the list's): `result` then needs
   * no await, no network lookup and no closure per bet (100 an answer).
   */
  loaded?: { row: BetWithResult; maxAge: number };
}

// BetResult and Groth16Proof are served by the history subgraph too (kit/bet-result.ts owns them).
export type { BetResultModel, Groth16ProofModel } from "../kit/bet-result.ts";

/** What the results loader knows of a bet: its result, and how far its latest change is final. */
export interface BetWithResult {
  chainId: number;
  result: BetResultModel | null;
  lastChangeBlock: bigint;
  status: string;
}

/** One entry of `fairnessStats`, everything computed (the counters read in one statement, the statistics in fairness.ts). */
export interface GameStatsModel {
  chainId: number;
  game: string;
  settledBets: bigint;
  wonBets: bigint;
  refundedBets: bigint;
  totalStake: bigint;
  totalPayout: bigint;
  observedRtp: number;
  expectedRtp: number;
  outcomeHistogram: bigint[];
  chiSquare: number;
  pValue: number;
  finalizedSettledBets: bigint;
}
