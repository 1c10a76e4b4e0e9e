import type { Database } from "../../core/db.ts";
import type { Bet, BetStatus, Prisma } from "../../prisma/generated/client.ts";
import type { ExplorerKey } from "./cursor.ts";
import { placedAtRange } from "./data.ts";

// The statements of the explorer queries (`bets`, `betsByTransaction`). Page order is
// (placedAt, chainId, betId): time across networks, then the network, then the contract's own
// order (ids grow with placement). Every single filter has an index leading with its column and
// followed by that order (prisma/schema.prisma), so a page is an index range read from the cursor.

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

export interface ExplorerConditions {
  where: Prisma.BetWhereInput;
  /** Counter rows whose sum is the totalCount, when the filter uses only their key columns. */
  counter: ExplorerCounter;
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
  let counter: ExplorerCounter = null;
  if (filter.game === undefined && filter.token === undefined && placedAt === undefined) {
    counter =
      filter.player !== undefined ? { table: "PlayerBetCount", where: { player: filter.player, ...byCounterKey } } : { table: "BetCount", where: byCounterKey };
  }
  return { where, counter };
}

/** Rows strictly after `key` in page order; the bound on placedAt lets the index scan start at the cursor. */
function afterKey(key: ExplorerKey, direction: "ASC" | "DESC"): Prisma.BetWhereInput {
  const beyond = direction === "DESC" ? "lt" : "gt";
  const upTo = direction === "DESC" ? "lte" : "gte";
  return {
    placedAt: { [upTo]: key.placedAt },
    OR: [
      { placedAt: { [beyond]: key.placedAt } },
      { placedAt: key.placedAt, chainId: { [beyond]: key.chainId } },
      { placedAt: key.placedAt, chainId: key.chainId, betId: { [beyond]: key.betId.toString() } },
    ],
  };
}

export function explorerPage(
  db: Database,
  where: Prisma.BetWhereInput,
  page: { after?: ExplorerKey; direction: "ASC" | "DESC"; take: number },
): Promise<Bet[]> {
  const order = page.direction === "DESC" ? "desc" : "asc";
  return db.prisma.bet.findMany({
    where: page.after ? { AND: [where, afterKey(page.after, page.direction)] } : where,
    orderBy: [{ placedAt: order }, { chainId: order }, { betId: order }],
    take: page.take,
  });
}

/** From counters: at most (networks × 3) rows, O(1) in the bets. Otherwise an exact count of the
 * matching rows (priced by the gateway's cost model as such). */
export async function countExplorerBets(db: Database, conditions: ExplorerConditions): Promise<number> {
  const { counter } = conditions;
  if (counter?.table === "BetCount") {
    const { _sum } = await db.prisma.betCount.aggregate({ where: counter.where, _sum: { bets: true } });
    return Number(_sum.bets ?? 0n);
  }
  if (counter?.table === "PlayerBetCount") {
    const { _sum } = await db.prisma.playerBetCount.aggregate({ where: counter.where, _sum: { bets: true } });
    return Number(_sum.bets ?? 0n);
  }
  return db.prisma.bet.count({ where: conditions.where });
}

/** Bets whose BetPlaced, BetSettled or BetRefunded event is in the transaction (one index each). */
export function betsInTransaction(db: Database, chainId: number, txHash: string): Promise<Bet[]> {
  return db.prisma.bet.findMany({
    where: { chainId: BigInt(chainId), OR: [{ placedTx: txHash }, { settledTx: txHash }, { refundedTx: txHash }] },
    orderBy: [{ placedAt: "asc" }, { betId: "asc" }],
  });
}
