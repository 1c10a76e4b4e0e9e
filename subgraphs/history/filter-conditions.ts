import type { BetStatus, Prisma } from "../../prisma/generated/client.ts";

// The conditions of a wallet's filter (`playerBets`), as its page and count statements are built
// from them; the statements themselves are in data.ts (betPage, countBets).

export const INT8_MAX = (1n << 63n) - 1n;

export interface BetFilter {
  wallet: string;
  chainId?: number;
  /** Distinct and sorted, so that equal filters make equal cursors. */
  statuses?: BetStatus[];
  game?: string;
  /** Unix seconds, decimal strings (UInt256). */
  placedFrom?: string;
  placedTo?: string;
}

export interface BetFilterConditions {
  /** The filter, as the page and counter statements (sent through the driver) are built from it. */
  filter: BetFilter;
  /** The wallet + filter condition on Bet, without the page bound. */
  where: Prisma.BetWhereInput;
  /** The same condition on the per-wallet counters when the filter uses only chainId and/or status; null otherwise. */
  counterWhere: Prisma.PlayerBetCountWhereInput | null;
  /**
   * No single index serves the page in page order (a time range, several statuses, two of chainId /
   * status / game): it may read much of the wallet's history. As gateway/limits.ts prices it; such a
   * page, like a count without counters, runs in the expensive lane (kit/expensive-lane.ts).
   */
  scans: boolean;
}

/** Unix-seconds bounds beyond what the column holds: such a `from` matches nothing, such a `to` bounds nothing. */
export function placedAtRange(from: string | undefined, to: string | undefined): Prisma.BigIntFilter | undefined {
  const range: Prisma.BigIntFilter = {};
  if (from !== undefined) {
    if (BigInt(from) > INT8_MAX) range.gt = INT8_MAX;
    else range.gte = BigInt(from);
  }
  if (to !== undefined && BigInt(to) <= INT8_MAX) range.lt = BigInt(to);
  return Object.keys(range).length > 0 ? range : undefined;
}

export function betFilterConditions(filter: BetFilter): BetFilterConditions {
  // The columns PlayerBetCount is keyed by: the same condition holds on Bet and on the counters.
  const byCounterKey = {
    player: filter.wallet,
    ...(filter.chainId !== undefined ? { chainId: BigInt(filter.chainId) } : {}),
    ...(filter.statuses ? { status: { in: filter.statuses } } : {}),
  };
  const where: Prisma.BetWhereInput = { ...byCounterKey, ...(filter.game !== undefined ? { game: filter.game } : {}) };
  const placedAt = placedAtRange(filter.placedFrom, filter.placedTo);
  if (placedAt) where.placedAt = placedAt;
  const statuses = filter.statuses?.length ?? 0;
  const narrowings = [filter.chainId !== undefined, statuses > 0, filter.game !== undefined].filter(Boolean).length;
  const timeRange = filter.placedFrom !== undefined || filter.placedTo !== undefined;
  return {
    filter,
    where,
    counterWhere: filter.game === undefined && placedAt === undefined ? byCounterKey : null,
    scans: timeRange || statuses > 1 || narrowings > 1,
  };
}
