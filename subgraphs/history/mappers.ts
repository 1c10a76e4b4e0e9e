import type { Bet, Prisma } from "../../prisma/generated/client.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
export type BetModel = Bet;
export type NetworkRefModel = { chainId: bigint | number };
export interface BetEdgeModel {
  cursor: string;
  node: BetModel;
}
export interface BetConnectionModel {
  rows: BetModel[];
  hasNextPage: boolean;
  /** The wallet + filter condition without the page bound, for `totalCount`. */
  where: Prisma.BetWhereInput;
  /** The same condition on the per-wallet counters when the filter uses only chainId and/or status
   * (`totalCount` then sums a handful of counter rows instead of counting the wallet's bets); null otherwise. */
  counterWhere: Prisma.PlayerBetCountWhereInput | null;
  cursorFor(bet: BetModel): string;
}
