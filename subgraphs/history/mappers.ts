import type { Bet, Token } from "../../prisma/generated/client.ts";
import type { UInt256Like } from "../../core/scalars.ts";
import type { BetResultModel } from "../kit/bet-result.ts";

// Resolvers receive Prisma rows; these are the shapes, named after the GraphQL types they back.

/** A network's settings as its "Network" row holds them (the networks subgraph's NetworkConfig fields history shares). */
export interface NetworkSettings {
  chainId: bigint | number;
  name: string;
  confirmations: number;
}

/**
 * What a page statement read beside a bet because the query selects it (data.ts betPage): its
 * network's settings, and its result (null: the bet has none). Absent: not read; the field's
 * resolver loads it.
 */
export interface BetJoins {
  network?: NetworkSettings;
  result?: BetResultModel | null;
}

/**
 * A bet as the resolvers get it: a row of every column, or a page's narrow row (data.ts betPage),
 * which leaves out what the operation cannot select (WIDE_BET_FIELDS) and what the API never shows,
 * and holds its 256-bit numbers as the decimal text the API serves (no Decimal made and printed again).
 */
export type BetModel = Pick<Bet, "chainId" | "player" | "game" | "status" | "placedBlock" | "placedLogIndex" | "lastChangeBlock"> &
  Partial<Omit<Bet, "betId" | "stake">> & { betId: UInt256Like; stake: UInt256Like; joined?: BetJoins };
export type TokenModel = Token;
/** A bet's network: its id, and its settings when the page statement read them. */
export type NetworkRefModel = { chainId: bigint | number } & Partial<NetworkSettings>;
// BetResult and Groth16Proof are the results subgraph's types, shared (kit/bet-result.ts owns them).
export type { BetResultModel, Groth16ProofModel } from "../kit/bet-result.ts";
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
