// Resolvers receive rows; these are the shapes, named after the GraphQL types they back.
import type { SnarkjsProof } from "../../zk/proof-shape.ts";

/** A bet known to exist; its result is loaded (batched) only when asked for. */
export interface BetRefModel {
  chainId: number;
  betId: string;
  /** The bet's row when the parent field has already read it (`betResults`): `result` then needs no await. */
  loaded?: BetWithResult;
}

/**
 * A `BetResult` row as the results query reads it: uint256 columns cast to text in SQL, so no
 * driver or JSON step can turn them into floating point on the way.
 */
export interface BetResultModel {
  outcome: string;
  won: boolean;
  payout: string;
  proof: Groth16ProofModel;
}

/**
 * A `Groth16Proof` in the API's layout, shaped once when its row is read: every field is served as
 * it stands (no resolver per field: 100 proofs are ~1 000 fields per answer).
 */
export interface Groth16ProofModel {
  protocol: SnarkjsProof["protocol"];
  curve: SnarkjsProof["curve"];
  piA: SnarkjsProof["pi_a"];
  piB: SnarkjsProof["pi_b"];
  piC: SnarkjsProof["pi_c"];
  publicSignals: string[];
  /** Absent when the operation does not select it (subgraphs/results/data.ts ResultReads). */
  solidityCalldata?: string;
  verified: boolean;
}

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
