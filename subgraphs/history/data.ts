import type { Database } from "../../core/db.ts";
import type { Bet, BetStatus, Prisma } from "../../prisma/generated/client.ts";
import { betIdsByChain } from "../kit/bet-key.ts";
import type { SortKey } from "./cursor.ts";

// Every statement of the history subgraph, and the conditions they are built from.

const INT8_MAX = (1n << 63n) - 1n;

/** Bets by "chainId:betId" key (a DataLoader batch): one `chainId = … AND betId IN (…)` clause per chain. */
export function betsByKeys(db: Database, keys: readonly string[]): Promise<Bet[]> {
  return db.prisma.bet.findMany({
    where: { OR: [...betIdsByChain(keys)].map(([chainId, betIds]) => ({ chainId, betId: { in: betIds } })) },
  });
}

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
  /** The wallet + filter condition on Bet, without the page bound. */
  where: Prisma.BetWhereInput;
  /** The same condition on the per-wallet counters when the filter uses only chainId and/or status; null otherwise. */
  counterWhere: Prisma.PlayerBetCountWhereInput | null;
}

/** Unix-seconds bounds beyond what the column holds: such a `from` matches nothing, such a `to` bounds nothing. */
function placedAtRange(from: string | undefined, to: string | undefined): Prisma.BigIntFilter | undefined {
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
  return { where, counterWhere: filter.game === undefined && placedAt === undefined ? byCounterKey : null };
}

/** Rows strictly after `key` in the page order. The `lte`/`gte` bound on placedBlock is what lets
 * PostgreSQL start the index scan at the cursor instead of filtering from the top (no OFFSET cost). */
function after(key: SortKey, direction: "ASC" | "DESC"): Prisma.BetWhereInput {
  const beyond = direction === "DESC" ? "lt" : "gt";
  const upTo = direction === "DESC" ? "lte" : "gte";
  return {
    placedBlock: { [upTo]: key.placedBlock },
    OR: [
      { placedBlock: { [beyond]: key.placedBlock } },
      { placedBlock: key.placedBlock, placedLogIndex: { [beyond]: key.logIndex } },
      { placedBlock: key.placedBlock, placedLogIndex: key.logIndex, chainId: { [beyond]: key.chainId } },
    ],
  };
}

/** Up to `take` bets matching `where`, in page order (placedBlock, log index, chain), strictly after `page.after` when given. */
export function betPage(db: Database, where: Prisma.BetWhereInput, page: { after?: SortKey; direction: "ASC" | "DESC"; take: number }): Promise<Bet[]> {
  const order = page.direction === "DESC" ? "desc" : "asc";
  return db.prisma.bet.findMany({
    where: page.after ? { AND: [where, after(page.after, page.direction)] } : where,
    orderBy: [{ placedBlock: order }, { placedLogIndex: order }, { chainId: order }],
    take: page.take,
  });
}

/** Filters on chainId / status alone: the sum of at most (networks × 3) counter rows kept by
 * triggers (O(1) in the wallet's bets). With game or a time range: an exact count over the
 * wallet's index range (O(bets of the wallet)). */
export async function countBets(db: Database, conditions: BetFilterConditions): Promise<number> {
  if (!conditions.counterWhere) return db.prisma.bet.count({ where: conditions.where });
  const { _sum } = await db.prisma.playerBetCount.aggregate({ where: conditions.counterWhere, _sum: { bets: true } });
  return Number(_sum.bets ?? 0n);
}

/** A wallet's pending bets. Literal `status = 'PENDING'` so PostgreSQL proves the partial index's predicate and counts from it. */
export async function countPendingBets(db: Database, wallet: string, chainId?: number): Promise<number> {
  const [row] =
    chainId === undefined
      ? await db.prisma.$queryRaw<[{ count: number }]>`
      SELECT count(*)::int AS count FROM "Bet" WHERE "player" = ${wallet} AND "status" = 'PENDING'`
      : await db.prisma.$queryRaw<[{ count: number }]>`
      SELECT count(*)::int AS count FROM "Bet" WHERE "player" = ${wallet} AND "chainId" = ${BigInt(chainId)} AND "status" = 'PENDING'`;
  return row.count;
}

/** A bet as the CSV export writes it: its columns and, when settled, won / payout. */
export type ExportedBet = Bet & { result: { won: boolean; payout: Prisma.Decimal } | null };

/**
 * One keyset page of a wallet's whole history (optionally one network), newest first, strictly after
 * `after`: the CSV export (GET /wallets/{address}/bets.csv) reads a wallet this way, page by page, so
 * memory stays flat whatever the wallet's size. Served by the playerBets indexes.
 */
export function walletBetsPage(db: Database, query: { wallet: string; chainId?: number; after?: SortKey; take: number }): Promise<ExportedBet[]> {
  const { where } = betFilterConditions({ wallet: query.wallet, chainId: query.chainId });
  return db.prisma.bet.findMany({
    where: query.after ? { AND: [where, after(query.after, "DESC")] } : where,
    orderBy: [{ placedBlock: "desc" }, { placedLogIndex: "desc" }, { chainId: "desc" }],
    include: { result: { select: { won: true, payout: true } } },
    take: query.take,
  });
}
