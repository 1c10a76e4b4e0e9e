import type { Bet, Token } from "../../prisma/generated/client.ts";

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
  /** `totalCount`: run only when the query selects it (what it costs depends on the filter). */
  count(): Promise<number>;
  cursorFor(bet: BetModel): string;
}
