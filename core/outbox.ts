// The BetUpdate outbox, and its one owner: nothing else writes the table (test/outbox-owner.test.ts
// fails on any other writer). One row per bet state change; the realtime publisher publishes from
// it, nodes heal gaps from it, resumes replay from it.
//
// The invariant everything rests on: seq order is commit order. `seq` comes from a sequence, and
// sequence values are handed out at INSERT, not at COMMIT: a transaction holding seq 41 could commit
// after another holding seq 42, and a reader that had read "everything after 40" (and seen 42) would
// never see 41. So every write takes `pg_advisory_xact_lock(OUTBOX_LOCK_KEY)` right before its
// insert; COMMIT releases it. Writers (every indexer network and process, fixtures, benchmarks,
// tests) are serialised from their first seq to their commit: once a reader has seen seq N, no
// smaller seq can appear later. Within one statement seq follows the array order.
//
// Reads are raw SQL so that uint256 ids come back as exact text.
import { Prisma, type Bet, type BetResult, type BetUpdateType } from "../prisma/generated/client.ts";
import { betToJson, type BetJson } from "./bet-json.ts";
import { betJsonSql } from "./bet-json-sql.ts";
import type { Database, ReadStatement } from "./db.ts";
import type { NetworkEntry } from "./networks.ts";
import { activeTraceparent } from "./tracing.ts";

/** Key of the transaction-level advisory lock that orders outbox writers (any constant unique in the database). */
export const OUTBOX_LOCK_KEY = 0x6f7574626f78; // "outbox"

/** The NOTIFY channel the table's trigger signals on every INSERT statement (migration `…_bet_update_notify`). */
export const BET_UPDATES_CHANNEL = "bet_updates";

/** PostgreSQL BIGINT: a `seq` beyond it cannot exist. */
export const MAX_SEQ = (1n << 63n) - 1n;

type Tx = Prisma.TransactionClient;

// ------------------------------------------------------------------------------------- write

/** A row to append: what the table stores but `seq` (assigned on insert). */
export interface BetUpdateRow {
  chainId: bigint;
  betId: Prisma.Decimal | string;
  type: BetUpdateType;
  player: string;
  blockNumber: bigint;
  blockHash: string;
  /** The bet right after the change, as GraphQL serialises it. */
  bet: BetJson;
  /** Default: the writing transaction's start (the database's clock). */
  createdAt?: Date;
}

/** The row of a change of `bet` (and its result when settled) in `block`. */
export function betUpdateRow(
  type: BetUpdateType,
  bet: Bet,
  result: BetResult | null,
  block: { number: bigint; hash: string },
  network: NetworkEntry | undefined,
): BetUpdateRow {
  return {
    chainId: bet.chainId,
    betId: bet.betId,
    type,
    player: bet.player,
    blockNumber: block.number,
    blockHash: block.hash,
    bet: betToJson(bet, result, network),
  };
}

// Rows travel as ONE jsonb document per statement (an array of objects, expanded with
// jsonb_array_elements): one parameter and one parse for thousands of rows. Measured on 3 200
// settled-bet rows: ~0.3 s on PGlite and ~0.2 s on PostgreSQL, against ~0.7 / 0.4 s for unnest of
// parallel arrays and ~1.3 / 1.0 s for createMany.
const CHUNK = 5_000;

/**
 * Appends `rows` inside `tx`, an interactive transaction the caller owns (the indexer writes bets,
 * cursor and outbox in one): takes the writers' lock, held until that transaction ends, then
 * inserts; seq follows the array order. Resolves to the new seqs, in that order.
 */
export async function appendBetUpdates(tx: Tx, rows: readonly BetUpdateRow[]): Promise<bigint[]> {
  if (rows.length === 0) return [];
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK_KEY})`;
  // The writer's trace (its commit span) for the publisher to continue; null when it does not trace.
  const traceparent = activeTraceparent() ?? null;
  const seqs: bigint[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const doc = JSON.stringify(
      rows.slice(i, i + CHUNK).map((u) => ({
        c: u.chainId.toString(10),
        b: typeof u.betId === "string" ? u.betId : u.betId.toFixed(0),
        t: u.type,
        p: u.player,
        n: u.blockNumber.toString(10),
        h: u.blockHash,
        j: u.bet,
        a: u.createdAt?.toISOString() ?? null,
      })),
    );
    const inserted = await tx.$queryRaw<{ seq: bigint }[]>`
      INSERT INTO "BetUpdate" ("chainId", "betId", "type", "player", "blockNumber", "blockHash", "bet", "createdAt", "traceparent")
      SELECT (e->>'c')::bigint, (e->>'b')::numeric, (e->>'t')::"BetUpdateType", e->>'p', (e->>'n')::bigint, e->>'h', e->'j',
        COALESCE((e->>'a')::timestamptz, CURRENT_TIMESTAMP), ${traceparent}::text
      FROM jsonb_array_elements(${doc}::jsonb) WITH ORDINALITY AS r(e, ord)
      ORDER BY ord
      RETURNING "seq"`;
    seqs.push(...inserted.map((row) => row.seq).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  return seqs;
}

/**
 * Appends inside `tx` (as appendBetUpdates) a REMOVED row for every bet of `chainId`, newest
 * placement first: a network reset's, before its bets are deleted. One INSERT … SELECT: the rows
 * (up to millions, each settled one with its proof) never pass through the process, and no
 * statement carries a parameter per bet. Each row is betUpdateRow("REMOVED", bet, result,
 * placement block, network)'s. Resolves to how many rows it appended.
 */
export async function appendRemovedUpdates(tx: Tx, chainId: number, network: NetworkEntry): Promise<number> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK_KEY})`;
  const traceparent = activeTraceparent() ?? null;
  return tx.$executeRaw`
    INSERT INTO "BetUpdate" ("chainId", "betId", "type", "player", "blockNumber", "blockHash", "bet", "traceparent")
    SELECT b."chainId", b."betId", 'REMOVED', b.player, b."placedBlock", b."placedBlockHash", ${betJsonSql(network)}, ${traceparent}::text
    FROM "Bet" b LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"
    WHERE b."chainId" = ${BigInt(chainId)}
    ORDER BY b."placedBlock" DESC, b."placedLogIndex" DESC`;
}

/**
 * Appends inside `tx` (as appendBetUpdates) the rows of a reorg rollback of `chainId` above block
 * `above`, before its writes: for every bet changed above it, latest change first, REMOVED with its
 * state and result when it was placed above it, else PLACED with the bet as PENDING (pendingBet,
 * no result). One INSERT … SELECT, as appendRemovedUpdates: a rollback may touch tens of thousands
 * of bets. Each row is betUpdateRow's (placement block). Resolves to the ids of each kind, in seq order.
 */
export async function appendRollbackUpdates(tx: Tx, chainId: number, above: bigint, network: NetworkEntry): Promise<{ removed: string[]; reverted: string[] }> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK_KEY})`;
  const traceparent = activeTraceparent() ?? null;
  // `b` is each bet as its update carries it: a reverted one with its lifecycle cleared (pendingBet).
  const rows = await tx.$queryRaw<{ seq: bigint; betId: string; removed: boolean }[]>`
    WITH b AS (
      SELECT "chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", "placedBlock", "placedLogIndex",
             "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock" AS "changedBlock", "placedBlock" > ${above} AS removed,
             CASE WHEN "placedBlock" > ${above} THEN status ELSE 'PENDING' END AS status,
             CASE WHEN "placedBlock" > ${above} THEN "settledBlock" END AS "settledBlock",
             CASE WHEN "placedBlock" > ${above} THEN "settledTx" END AS "settledTx",
             CASE WHEN "placedBlock" > ${above} THEN "settledAt" END AS "settledAt",
             CASE WHEN "placedBlock" > ${above} THEN "refundedBlock" END AS "refundedBlock",
             CASE WHEN "placedBlock" > ${above} THEN "refundedTx" END AS "refundedTx",
             CASE WHEN "placedBlock" > ${above} THEN "refundedAt" END AS "refundedAt",
             CASE WHEN "placedBlock" > ${above} THEN "lastChangeBlock" ELSE "placedBlock" END AS "lastChangeBlock"
      FROM "Bet" WHERE "chainId" = ${BigInt(chainId)} AND "lastChangeBlock" > ${above}
    )
    INSERT INTO "BetUpdate" ("chainId", "betId", "type", "player", "blockNumber", "blockHash", "bet", "traceparent")
    SELECT b."chainId", b."betId", CASE WHEN b.removed THEN 'REMOVED' ELSE 'PLACED' END::"BetUpdateType", b.player, b."placedBlock",
           b."placedBlockHash", ${betJsonSql(network)}, ${traceparent}::text
    FROM b LEFT JOIN "BetResult" r ON b.removed AND r."chainId" = b."chainId" AND r."betId" = b."betId"
    ORDER BY b."changedBlock" DESC, b."placedBlock" DESC, b."placedLogIndex" DESC
    RETURNING "seq", "betId"::text AS "betId", "type" = 'REMOVED' AS removed`;
  rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  return { removed: rows.filter((r) => r.removed).map((r) => r.betId), reverted: rows.filter((r) => !r.removed).map((r) => r.betId) };
}

/** Empties the table and restarts seq at 1 (`db:seed --reset`, tests), inside `tx`. */
export async function clearBetUpdates(tx: Tx): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK_KEY})`;
  await tx.$executeRaw`TRUNCATE "BetUpdate" RESTART IDENTITY`;
}

// -------------------------------------------------------------------------------------- read

/** Which updates a read keeps: realtime's SubscriptionState is one (the rule of `matches` there). */
export interface OutboxFilter {
  all: boolean;
  chainIds: ReadonlySet<number>;
  wallets: ReadonlySet<string>;
  bets: ReadonlyMap<string, { chainId: number; betId: string }>;
}

const OLDEST_SEQ: ReadStatement = { name: "outbox-oldest-seq", text: `SELECT min("seq")::text AS "min" FROM "BetUpdate"` };

interface StoredRow {
  seq: bigint;
  chainId: bigint;
  betId: string;
  type: BetUpdateType;
  player: string;
  bet: BetJson;
}

/**
 * One stored update as readers get it: seq and ids in their wire forms, the player (for wallet
 * rooms) and the bet JSON. The realtime tier's FeedUpdate (realtime/events.ts) has this shape.
 */
export interface StoredBetUpdate {
  seq: string;
  type: BetUpdateType;
  chainId: number;
  betId: string;
  player: string;
  bet: BetJson;
}

function toStoredUpdate(row: StoredRow): StoredBetUpdate {
  return { seq: row.seq.toString(), type: row.type, chainId: Number(row.chainId), betId: row.betId, player: row.player, bet: row.bet };
}

/** The SQL condition of a filter, or null when it matches nothing. */
function filterCondition(filter: OutboxFilter): Prisma.Sql | null {
  const parts: Prisma.Sql[] = [];
  if (filter.chainIds.size > 0) {
    parts.push(Prisma.sql`"chainId" IN (${Prisma.join([...filter.chainIds].map((c) => BigInt(c)))})`);
  }
  const chainsOnly = filter.chainIds.size > 0 && filter.wallets.size === 0 && filter.bets.size === 0;
  if (!filter.all && !chainsOnly) {
    const any: Prisma.Sql[] = [];
    if (filter.wallets.size > 0) any.push(Prisma.sql`"player" IN (${Prisma.join([...filter.wallets])})`);
    if (filter.bets.size > 0) {
      const pairs = [...filter.bets.values()].map((b) => Prisma.sql`(${BigInt(b.chainId)}::bigint, ${b.betId}::numeric)`);
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
  /** Only rows that match this filter. */
  filter?: OutboxFilter;
}

export interface WindowCheck {
  ok: boolean;
  message?: string;
  /** The newest stored seq when it was checked (a resume within the window reads at most head − since updates). */
  head?: bigint;
}

/** The replay window: how far back a resume may start. */
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
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  /** Appends `rows` in one transaction of its own (see appendBetUpdates); resolves to their seqs once committed. */
  append(rows: readonly BetUpdateRow[]): Promise<bigint[]> {
    if (rows.length === 0) return Promise.resolve([]);
    return this.db.prisma.$transaction((tx) => appendBetUpdates(tx, rows));
  }

  /** Empties the table and restarts seq at 1. */
  clear(): Promise<void> {
    return this.db.prisma.$transaction((tx) => clearBetUpdates(tx));
  }

  /** Calls `onAppend` after every committed INSERT statement (and after a LISTEN reconnect). Resolves to a function that stops. */
  listen(onAppend: () => void): Promise<() => Promise<void>> {
    return this.db.listen(BET_UPDATES_CHANNEL, () => onAppend());
  }

  /** The newest seq in the table (0 when empty). */
  async head(): Promise<bigint> {
    const [row] = await this.db.prisma.$queryRaw<{ max: bigint | null }[]>`SELECT max("seq") AS "max" FROM "BetUpdate"`;
    return row?.max ?? 0n;
  }

  /** Rows with seq > `after`, in seq order. */
  async after(after: bigint, options: ReadOptions): Promise<StoredBetUpdate[]> {
    const conditions: Prisma.Sql[] = [Prisma.sql`"seq" > ${after}`];
    if (options.upTo !== undefined) conditions.push(Prisma.sql`"seq" <= ${options.upTo}`);
    if (options.filter) {
      const condition = filterCondition(options.filter);
      if (!condition) return [];
      conditions.push(condition);
    }
    // Straight through the driver: Prisma's handling of each row was a third of a replay's CPU
    // (bench/replay-cost.ts). Unnamed, so planned with the filter's values, as Prisma's was.
    const statement = Prisma.sql`
      SELECT "seq"::text AS "seq", "type"::text AS "type", "chainId"::text AS "chainId", "betId"::text AS "betId", "player", "bet"
      FROM "BetUpdate" WHERE ${Prisma.join(conditions, " AND ")}
      ORDER BY "BetUpdate"."seq" LIMIT ${options.limit}`;
    // (The table's column: ORDER BY "seq" would sort by the text above.) Both drivers take decimal strings for bigints.
    const values = statement.values.map((value) => (typeof value === "bigint" ? value.toString() : value));
    const rows = await this.db.read<StoredBetUpdate & { chainId: string }>({ text: statement.text }, values);
    return rows.map((row) => ({ ...row, chainId: Number(row.chainId) }));
  }

  /**
   * The publisher's read: rows with seq > `after`, in seq order, each with the trace context its
   * writer stored (null when it did not trace). Kept apart from the updates, which readers send on.
   */
  async afterWithTrace(after: bigint, limit: number): Promise<{ updates: StoredBetUpdate[]; traceparents: (string | null)[] }> {
    const rows = await this.db.prisma.$queryRaw<(StoredRow & { traceparent: string | null })[]>`
      SELECT "seq", "chainId", "betId"::text AS "betId", "type"::text AS "type", "player", "bet", "traceparent"
      FROM "BetUpdate" WHERE "seq" > ${after} ORDER BY "seq" LIMIT ${limit}`;
    return { updates: rows.map(toStoredUpdate), traceparents: rows.map((row) => row.traceparent) };
  }

  /** The oldest seq in the table (null when empty). Pruning only ever raises it. */
  async oldest(): Promise<bigint | null> {
    // Through the driver: a replay asks before each page (Prisma's overhead was most of that query).
    const [row] = await this.db.read<{ min: string | null }>(OLDEST_SEQ, []);
    return row?.min == null ? null : BigInt(row.min);
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
    return { ok: true, head };
  }
}
