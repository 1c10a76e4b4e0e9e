// Reads of the BetUpdate outbox: the table is the truth the publisher publishes from, nodes heal
// gaps from, and resumes replay from. Raw SQL so that uint256 ids come back as exact text.
import { Prisma } from "../prisma/generated/client.ts";
import type { BetJson } from "../core/bet-json.ts";
import type { Database } from "../core/db.ts";
import type { BetUpdateType, FeedUpdate } from "./events.ts";
import type { SubscriptionState } from "./subscription.ts";

/** PostgreSQL BIGINT: a `seq` beyond it cannot exist. */
export const MAX_SEQ = (1n << 63n) - 1n;

interface OutboxRow {
  seq: bigint;
  chainId: bigint;
  betId: string;
  type: BetUpdateType;
  player: string;
  bet: BetJson;
}

export function rowToUpdate(row: OutboxRow): FeedUpdate {
  return { seq: row.seq.toString(), type: row.type, chainId: Number(row.chainId), betId: row.betId, player: row.player, bet: row.bet };
}

/** The SQL condition of `matches(state, ·)` (subscription.ts), or null when the state matches nothing. */
function stateCondition(state: SubscriptionState): Prisma.Sql | null {
  const parts: Prisma.Sql[] = [];
  if (state.chainIds.size > 0) {
    parts.push(Prisma.sql`"chainId" IN (${Prisma.join([...state.chainIds].map((c) => BigInt(c)))})`);
  }
  const chainsOnly = state.chainIds.size > 0 && state.wallets.size === 0 && state.bets.size === 0;
  if (!state.all && !chainsOnly) {
    const any: Prisma.Sql[] = [];
    if (state.wallets.size > 0) any.push(Prisma.sql`"player" IN (${Prisma.join([...state.wallets])})`);
    if (state.bets.size > 0) {
      const pairs = [...state.bets.values()].map((b) => Prisma.sql`(${BigInt(b.chainId)}::bigint, ${b.betId}::numeric)`);
      any.push(Prisma.sql`("chainId", "betId") IN (${Prisma.join(pairs)})`);
    }
    if (any.length === 0) return null;
    parts.push(Prisma.sql`(${Prisma.join(any, " OR ")})`);
  }
  return parts.length > 0 ? Prisma.join(parts, " AND ") : Prisma.sql`TRUE`;
}

export interface ReadOptions {
  /** Only rows with seq ≤ this. */
  upTo?: bigint;
  limit: number;
  /** Only rows that match this subscription. */
  filter?: SubscriptionState;
}

export interface WindowCheck {
  ok: boolean;
  message?: string;
}

export interface Retention {
  /** A resume may be at most this many seqs behind the newest (0: no limit). */
  maxUpdates: number;
  /** …and its first missed update at most this old (0: no limit). */
  maxAgeMs: number;
}

export const DEFAULT_RETENTION: Retention = { maxUpdates: 100_000, maxAgeMs: 24 * 3600_000 };

export interface PruneOptions {
  /** Rows deleted at most (one statement). */
  batchSize: number;
  /** Rows above this seq are kept whatever their age (the publisher's cursor: not yet published). */
  keepAbove?: bigint;
  now?: number;
}

export class Outbox {
  constructor(private readonly db: Database) {}

  /** The newest seq in the table (0 when empty). */
  async head(): Promise<bigint> {
    const [row] = await this.db.prisma.$queryRaw<{ max: bigint | null }[]>`SELECT max("seq") AS "max" FROM "BetUpdate"`;
    return row?.max ?? 0n;
  }

  /** Rows with seq > `after`, in seq order. */
  async after(after: bigint, options: ReadOptions): Promise<FeedUpdate[]> {
    const conditions: Prisma.Sql[] = [Prisma.sql`"seq" > ${after}`];
    if (options.upTo !== undefined) conditions.push(Prisma.sql`"seq" <= ${options.upTo}`);
    if (options.filter) {
      const condition = stateCondition(options.filter);
      if (!condition) return [];
      conditions.push(condition);
    }
    const rows = await this.db.prisma.$queryRaw<OutboxRow[]>`
      SELECT "seq", "chainId", "betId"::text AS "betId", "type"::text AS "type", "player", "bet"
      FROM "BetUpdate" WHERE ${Prisma.join(conditions, " AND ")}
      ORDER BY "seq" LIMIT ${options.limit}`;
    return rows.map(rowToUpdate);
  }

  /** The oldest seq in the table (null when empty). Pruning only ever raises it. */
  async oldest(): Promise<bigint | null> {
    const [row] = await this.db.prisma.$queryRaw<{ min: bigint | null }[]>`SELECT min("seq") AS "min" FROM "BetUpdate"`;
    return row?.min ?? null;
  }

  /**
   * Deletes the oldest rows that no resume can be served from any more, at most `batchSize` of
   * them; returns how many. Exactly the complement of `checkWindow`, keeping every row that either
   * bound still protects (a disabled bound protects every row):
   *
   * - count: a resume from s is refused when head − s > maxUpdates, so resumes from
   *   s ≥ head − maxUpdates are served and need the rows above that;
   * - age: a resume from s is refused when the first row after s is older than maxAge. Let y be
   *   the oldest row (in seq order) young enough: resumes from the row before y onwards are served,
   *   so that row is the age floor ("createdAt" is the writer's transaction start, so not quite in
   *   seq order: a younger row below an older one protects everything above it);
   * - floor = the lower of the two (and of `keepAbove`): rows above it are kept. So is the newest row
   *   at or below floor + 1: checkWindow refuses a resume from s < oldest − 1, and that row keeps a
   *   resume from the floor itself servable across a gap in the sequence.
   *
   * Only the oldest `batchSize` + 1 rows are read, so each call costs a bounded index range.
   */
  async prune(retention: Retention, options: PruneOptions): Promise<number> {
    if (retention.maxUpdates <= 0 || retention.maxAgeMs <= 0) return 0;
    const now = options.now ?? Date.now();
    const oldest = await this.db.prisma.$queryRaw<{ seq: bigint; createdAt: Date }[]>`
      SELECT "seq", "createdAt" FROM "BetUpdate" ORDER BY "seq" LIMIT ${options.batchSize + 1}`;
    if (oldest.length === 0) return 0;
    const countFloor = (await this.head()) - BigInt(retention.maxUpdates);
    const young = oldest.findIndex((row) => now - row.createdAt.getTime() <= retention.maxAgeMs);
    if (young === 0) return 0;
    // No young row among those read: y is further on, its predecessor at least the last one read.
    const ageFloor = oldest[young === -1 ? oldest.length - 1 : young - 1]!.seq;
    let floor = countFloor < ageFloor ? countFloor : ageFloor;
    if (options.keepAbove !== undefined && options.keepAbove < floor) floor = options.keepAbove;
    const kept = oldest.findLast((row) => row.seq <= floor + 1n);
    if (!kept) return 0;
    return this.db.prisma.$executeRaw`DELETE FROM "BetUpdate" WHERE "seq" < ${kept.seq}`;
  }

  /** Whether a resume from `since` is inside the retained window. */
  async checkWindow(since: bigint, retention: Retention, now = Date.now()): Promise<WindowCheck> {
    const [bounds] = await this.db.prisma.$queryRaw<{ min: bigint | null; max: bigint | null }[]>`
      SELECT min("seq") AS "min", max("seq") AS "max" FROM "BetUpdate"`;
    const head = bounds?.max ?? 0n;
    if (since > head) {
      return { ok: false, message: `sinceSeq ${since} is ahead of the newest stored update (${head}): re-read through GraphQL` };
    }
    if (retention.maxUpdates > 0 && head - since > BigInt(retention.maxUpdates)) {
      return { ok: false, message: `sinceSeq ${since} is more than ${retention.maxUpdates} updates behind (${head}): re-read through GraphQL` };
    }
    // Rows before the oldest stored one may have been pruned: nothing proves they are not missed.
    if (bounds?.min != null && since + 1n < bounds.min) {
      return { ok: false, message: `sinceSeq ${since} is older than the retained updates (from ${bounds.min}): re-read through GraphQL` };
    }
    if (retention.maxAgeMs > 0 && since < head) {
      const [first] = await this.db.prisma.$queryRaw<{ createdAt: Date }[]>`
        SELECT "createdAt" FROM "BetUpdate" WHERE "seq" > ${since} ORDER BY "seq" LIMIT 1`;
      if (first && now - first.createdAt.getTime() > retention.maxAgeMs) {
        return { ok: false, message: `sinceSeq ${since} is older than the ${Math.round(retention.maxAgeMs / 1000)} s replay window: re-read through GraphQL` };
      }
    }
    return { ok: true };
  }
}
