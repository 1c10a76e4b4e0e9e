import type { Bet, Token } from "../../prisma/generated/client.ts";
import type { BetFilterConditions } from "./data.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.
export type BetModel = Bet;
export type TokenModel = Token;
export type NetworkRefModel = { chainId: bigint | number };
export interface BetEdgeModel {
  cursor: string;
  node: BetModel;
}
export interface BetConnectionModel {
  rows: BetModel[];
  hasNextPage: boolean;
  /** The wallet + filter condition without the page bound, for `totalCount`. */
  conditions: BetFilterConditions;
  cursorFor(bet: BetModel): string;
}
