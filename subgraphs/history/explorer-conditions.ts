import type { BetStatus, Prisma } from "../../prisma/generated/client.ts";
import { placedAtRange } from "./filter-conditions.ts";

// The conditions of the explorer queries (`bets`, `betsByTransaction`). Page order is
// (placedAt, chainId, betId): time across networks, then the network, then the contract's own
// order (ids grow with placement). Every single filter has an index leading with its column and
// followed by that order (the Bet model's indexes in the Prisma schema), so a page is an index
// range read from the cursor. The statements themselves are in data.ts (explorerPage,
// countExplorerBets).

export interface ExplorerFilter {
  chainId?: number;
  /** Distinct and sorted, so that equal filters make equal cursors. */
  statuses?: BetStatus[];
  game?: string;
  player?: string;
  token?: string;
  /** Unix seconds, decimal strings (UInt256). */
  placedFrom?: string;
  placedTo?: string;
}

export type ExplorerCounter =
  | { table: "PlayerBetCount"; where: Prisma.PlayerBetCountWhereInput }
  | { table: "BetCount"; where: Prisma.BetCountWhereInput }
  | null;

type LeadColumn = "chainId" | "status" | "game" | "player" | "token";

export interface ExplorerConditions {
  where: Prisma.BetWhereInput;
  /** The one equality the filter narrows by (time range aside), whose index serves the page. */
  lead?: { column: LeadColumn; value: bigint | string };
  /** Counter rows whose sum is the totalCount, when the filter uses only their key columns. */
  counter: ExplorerCounter;
  /** No single index serves the page in page order (several statuses, two narrowing filters): the expensive lane's, as for a count without counters. */
  scans: boolean;
}

export function explorerConditions(filter: ExplorerFilter): ExplorerConditions {
  const byCounterKey = {
    ...(filter.chainId !== undefined ? { chainId: BigInt(filter.chainId) } : {}),
    ...(filter.statuses ? { status: { in: filter.statuses } } : {}),
  };
  const where: Prisma.BetWhereInput = {
    ...byCounterKey,
    ...(filter.player !== undefined ? { player: filter.player } : {}),
    ...(filter.game !== undefined ? { game: filter.game } : {}),
    ...(filter.token !== undefined ? { token: filter.token } : {}),
  };
  const placedAt = placedAtRange(filter.placedFrom, filter.placedTo);
  if (placedAt) where.placedAt = placedAt;
  // Several statuses are not one equality: "" marks them so that they count as a narrowing.
  const equalities: [LeadColumn, bigint | string | undefined][] = [
    ["chainId", filter.chainId !== undefined ? BigInt(filter.chainId) : undefined],
    ["status", filter.statuses?.length === 1 ? filter.statuses[0] : filter.statuses ? "" : undefined],
    ["game", filter.game],
    ["player", filter.player],
    ["token", filter.token],
  ];
  const given = equalities.filter(([, value]) => value !== undefined);
  // Not with a time range: the planner then weighs the range's rows of that index, read and sorted,
  // against the index order, and the plain form keeps both choices open.
  const ranged = filter.placedFrom !== undefined || filter.placedTo !== undefined;
  const lead = given.length === 1 && given[0]![1] !== "" && !ranged ? { column: given[0]![0], value: given[0]![1]! } : undefined;
  let counter: ExplorerCounter = null;
  if (filter.game === undefined && filter.token === undefined && placedAt === undefined) {
    counter =
      filter.player !== undefined ? { table: "PlayerBetCount", where: { player: filter.player, ...byCounterKey } } : { table: "BetCount", where: byCounterKey };
  }
  const scans = (filter.statuses?.length ?? 0) > 1 || given.length > 1;
  return { where, counter, scans, ...(lead ? { lead } : {}) };
}

/** Rows strictly after `key` in page order; the bound on placedAt lets the index scan start at the cursor. */
