import type { BetResult } from "../../prisma/generated/client.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
/** A bet known to exist; its result is loaded (batched) only when asked for. */
export interface BetRefModel {
  chainId: number;
  betId: string;
}
export type BetResultModel = BetResult;

/** snarkjs's proof layout as stored in `BetResult.proof`. */
export interface SnarkjsProof {
  protocol: string;
  curve: string;
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
}
