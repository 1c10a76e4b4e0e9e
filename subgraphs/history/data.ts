import { cancellable } from "../../core/cancellable-queries.ts";
import type { Database, ReadStatement } from "../../core/db.ts";
import { type Bet, type BetStatus, Prisma, type Token } from "../../prisma/generated/client.ts";
import { betIdsByChain, splitBetKey } from "../kit/bet-key.ts";
import { betResultOf, type BetResultModel, resultColumns, type ResultColumns } from "../kit/bet-result.ts";
import type { ExplorerKey, SortKey } from "./cursor.ts";
import type { ExplorerConditions } from "./explorer-conditions.ts";
import { type BetFilter, type BetFilterConditions, INT8_MAX, placedAtRange } from "./filter-conditions.ts";
import type { BetModel, NetworkSettings } from "./mappers.ts";
import { MAX_BETS_PER_TRANSACTION } from "../../core/arguments.ts";

// Every statement of the history subgraph, and the conditions they are built from (the explorer's
// conditions: explorer-conditions.ts).

/** Bets by "chainId:betId" key (a DataLoader batch): one `chainId = … AND betId IN (…)` clause per chain. */
export function betsByKeys(db: Database, keys: readonly string[]): Promise<Bet[]> {
  return db.prisma.bet.findMany({
    where: { OR: [...betIdsByChain(keys)].map(([chainId, betIds]) => ({ chainId, betId: { in: betIds } })) },
  });
}

/** "chainId:address" of a Token row (the DataLoader key). */
export const tokenKey = (chainId: bigint | number, address: string) => `${chainId}:${address}`;

/** Tokens by "chainId:address" key (a DataLoader batch: every token of a page): one `chainId = … AND address IN (…)` clause per chain. */
export function tokensByKeys(db: Database, keys: readonly string[]): Promise<Token[]> {
  const byChain = new Map<bigint, string[]>();
  for (const key of keys) {
    const [chainId = "", address = ""] = key.split(":");
    const list = byChain.get(BigInt(chainId)) ?? [];
    list.push(address);
    byChain.set(BigInt(chainId), list);
  }
  return db.prisma.token.findMany({ where: { OR: [...byChain].map(([chainId, addresses]) => ({ chainId, address: { in: addresses } })) } });
}

/** A Bet row as the page statement reads it: 64-bit and 256-bit numbers as text (the drivers' own parsing of them differs). */
interface BetRow {
  chainId: string;
  betId: string;
  player: string;
  token: string;
  stake: string;
  game: string;
  clientSeed: string;
  serverSeedHash: string;
  status: BetStatus;
  placedBlock: string;
  placedLogIndex: number;
  placedBlockHash: string;
  placedTx: string;
  placedAt: string;
  settledBlock: string | null;
  settledBlockHash: string | null;
  settledTx: string | null;
  settledAt: string | null;
  refundedBlock: string | null;
  refundedBlockHash: string | null;
  refundedTx: string | null;
  refundedAt: string | null;
  lastChangeBlock: string;
  finalizedUpdateBlock: string | null;
}

/** Every Bet column as BetRow names it: 1 where it is read as text (64- and 256-bit numbers). */
const READ_AS_TEXT = {
  chainId: 1,
  betId: 1,
  player: 0,
  token: 0,
  stake: 1,
  game: 0,
  clientSeed: 0,
  serverSeedHash: 0,
  status: 0,
  placedBlock: 1,
  placedLogIndex: 0,
  placedBlockHash: 0,
  placedTx: 0,
  placedAt: 1,
  settledBlock: 1,
  settledBlockHash: 0,
  settledTx: 0,
  settledAt: 1,
  refundedBlock: 1,
  refundedBlockHash: 0,
  refundedTx: 0,
  refundedAt: 1,
  lastChangeBlock: 1,
  finalizedUpdateBlock: 1,
} satisfies Record<keyof BetRow, 0 | 1>;
const BET_COLUMNS = Object.keys(READ_AS_TEXT) as (keyof BetRow)[];

/**
 * The Bet columns of a narrow page row (betPage `wide: false`): the bet's key, its place in the page
 * order (the cursor), what its hints are decided on, and the fields every list of bets shows.
 */
const NARROW_COLUMNS = ["chainId", "betId", "player", "stake", "game", "status", "placedBlock", "placedLogIndex", "lastChangeBlock"] as const;
type NarrowBetRow = Pick<BetRow, (typeof NARROW_COLUMNS)[number]>;

/**
 * The names of the Bet fields a narrow page row leaves out (`settled` for settledBlock, settledTx
 * and settledAt; `token` for tokenInfo too): a page reads every column when the operation's text
 * names one of them (kit/selection.ts mayAskFor). The block hashes and finalizedUpdateBlock are no
 * fields of the API.
 */
export const WIDE_BET_FIELDS = ["token", "clientSeed", "serverSeedHash", "placedTx", "placedAt", "settled", "refunded"] as const;

/** The Bet columns as BetRow names them, of the table (or alias) `table`: qualified, as a statement that joins other tables needs. */
function betColumns(table: string, columns: readonly (keyof BetRow)[] = BET_COLUMNS): string {
  return columns.map((column) => (READ_AS_TEXT[column] ? `${table}."${column}"::text AS "${column}"` : `${table}."${column}"`)).join(", ");
}

const bigintOrNull = (text: string | null) => (text === null ? null : BigInt(text));

function narrowBetOf(row: NarrowBetRow): BetModel {
  return {
    chainId: BigInt(row.chainId),
    betId: row.betId,
    player: row.player,
    stake: row.stake,
    game: row.game,
    status: row.status,
    placedBlock: BigInt(row.placedBlock),
    placedLogIndex: row.placedLogIndex,
    lastChangeBlock: BigInt(row.lastChangeBlock),
  };
}

function betOf(row: BetRow): Bet {
  return {
    chainId: BigInt(row.chainId),
    betId: new Prisma.Decimal(row.betId),
    player: row.player,
    token: row.token,
    stake: new Prisma.Decimal(row.stake),
    game: row.game,
    clientSeed: row.clientSeed,
    serverSeedHash: row.serverSeedHash,
    status: row.status,
    placedBlock: BigInt(row.placedBlock),
    placedLogIndex: row.placedLogIndex,
    placedBlockHash: row.placedBlockHash,
    placedTx: row.placedTx,
    placedAt: BigInt(row.placedAt),
    settledBlock: bigintOrNull(row.settledBlock),
    settledBlockHash: row.settledBlockHash,
    settledTx: row.settledTx,
    settledAt: bigintOrNull(row.settledAt),
    refundedBlock: bigintOrNull(row.refundedBlock),
    refundedBlockHash: row.refundedBlockHash,
    refundedTx: row.refundedTx,
    refundedAt: bigintOrNull(row.refundedAt),
    lastChangeBlock: BigInt(row.lastChangeBlock),
    finalizedUpdateBlock: bigintOrNull(row.finalizedUpdateBlock),
  };
}

/** The SQL conditions of a wallet's filter on the columns of `table`, `$n` numbered from `values.length + 1`, the values pushed onto `values`. */
function filterSql(filter: BetFilter, values: unknown[], table: string): string[] {
  const param = (value: unknown) => `$${values.push(value)}`;
  const conditions = [`${table}."player" = ${param(filter.wallet)}`];
  if (filter.chainId !== undefined) conditions.push(`${table}."chainId" = ${param(String(filter.chainId))}::bigint`);
  // One status: an equality, so the plan may use the (player, status, …) index as for a literal.
  if (filter.statuses?.length === 1) conditions.push(`${table}."status" = ${param(filter.statuses[0])}::"BetStatus"`);
  else if (filter.statuses) conditions.push(`${table}."status" = ANY(${param(filter.statuses)}::text[]::"BetStatus"[])`);
  if (filter.game !== undefined) conditions.push(`${table}."game" = ${param(filter.game)}`);
  const placedAt = placedAtRange(filter.placedFrom, filter.placedTo);
  if (placedAt?.gt !== undefined) conditions.push(`${table}."placedAt" > ${param(String(placedAt.gt))}::bigint`);
  if (placedAt?.gte !== undefined) conditions.push(`${table}."placedAt" >= ${param(String(placedAt.gte))}::bigint`);
  if (placedAt?.lt !== undefined) conditions.push(`${table}."placedAt" < ${param(String(placedAt.lt))}::bigint`);
  return conditions;
}

/** The statement's name says its shape (which conditions it has): one prepared statement per shape and connection. */
function shapeOf(filter: BetFilter, extra: string): string {
  const flags = [
    filter.chainId !== undefined,
    filter.statuses?.length === 1,
    (filter.statuses?.length ?? 0) > 1,
    filter.game !== undefined,
    filter.placedFrom !== undefined && BigInt(filter.placedFrom) > INT8_MAX,
    filter.placedFrom !== undefined && BigInt(filter.placedFrom) <= INT8_MAX,
    filter.placedTo !== undefined && BigInt(filter.placedTo) <= INT8_MAX,
  ];
  return `${flags.map(Number).join("")}${extra}`;
}

/** What a page statement reads beside the bets (BetJoins): what the query selects of them. */
export interface PageJoins {
  /** The bet's network's name and confirmations, from "Network". */
  network: boolean;
  /** The bet's result, from "BetResult" (kit/bet-result.ts). */
  result: boolean;
  /** With the result, its proof's solidityCalldata (default true; false when the operation cannot select it). */
  solidityCalldata?: boolean;
  /** With the result, its proof's piB and piC (default true; false when the operation can select neither). */
  wholeProof?: boolean;
}

const NO_JOINS: PageJoins = { network: false, result: false };

/** A page row: the bet (every column, or a narrow row's), and what PageJoins read beside it (the columns are absent when not read). */
type PageRow = (BetRow | NarrowBetRow) & { networkName?: string | null; networkConfirmations?: number | null } & (ResultColumns | { won?: undefined });

function pageBetOf(row: PageRow, wide: boolean): BetModel {
  const bet: BetModel = wide ? betOf(row as BetRow) : narrowBetOf(row);
  const network =
    row.networkName != null && row.networkConfirmations != null
      ? { chainId: bet.chainId, name: row.networkName, confirmations: row.networkConfirmations }
      : undefined;
  const result = row.won === undefined ? undefined : betResultOf(row);
  if (network || result !== undefined) bet.joined = { ...(network ? { network } : {}), ...(result !== undefined ? { result } : {}) };
  return bet;
}

/** The page statement's conditions, order and limit, `$n` numbered in `values`: betPage's, and the CSV export's under its join. */
function pageSql(filter: BetFilter, page: { after?: SortKey; direction: "ASC" | "DESC"; take: number }, values: unknown[]) {
  const conditions = filterSql(filter, values, `"Bet"`);
  const [order, beyond, upTo] = page.direction === "DESC" ? ["DESC", "<", "<="] : ["ASC", ">", ">="];
  if (page.after) {
    const block = `$${values.push(page.after.placedBlock.toString())}::bigint`;
    const logIndex = `$${values.push(page.after.logIndex)}::int`;
    const chainId = `$${values.push(page.after.chainId.toString())}::bigint`;
    conditions.push(
      `"Bet"."placedBlock" ${upTo} ${block}`,
      `("Bet"."placedBlock" ${beyond} ${block} OR ("Bet"."placedBlock" = ${block} AND "Bet"."placedLogIndex" ${beyond} ${logIndex})` +
        ` OR ("Bet"."placedBlock" = ${block} AND "Bet"."placedLogIndex" = ${logIndex} AND "Bet"."chainId" ${beyond} ${chainId}))`,
    );
  }
  const take = `$${values.push(page.take)}::int`;
  return {
    shape: shapeOf(filter, `${page.after ? 1 : 0}${order}`),
    where: conditions.join(" AND "),
    // ORDER BY names the table's columns: a bare name would sort by the output column of that name, the text.
    orderBy: `"Bet"."placedBlock" ${order}, "Bet"."placedLogIndex" ${order}, "Bet"."chainId" ${order}`,
    limit: take,
  };
}

/**
 * Up to `take` bets of the wallet's filter, in page order (placedBlock, log index, chain), strictly
 * after `page.after` when given, with what `page.joins` asks read in the same statement (the bets
 * LEFT JOIN "Network" and "BetResult" by their primary keys: a wallet page with its networks and
 * results is one statement, not three subgraph calls). Through the driver, not Prisma: Prisma's
 * per-row work was most of a wallet page's CPU in this subgraph. The `<=`/`>=` bound on
 * placedBlock is what lets PostgreSQL start the index scan at the cursor instead of filtering from
 * the top (no OFFSET cost). `wide: false` reads a narrow row of each bet (NARROW_COLUMNS: none of
 * WIDE_BET_FIELDS), for an operation that cannot select them: two statement shapes only, so that
 * the statements prepared on each connection stay few whatever clients select. `counted`: the
 * filter's count from the per-wallet counters in the same statement (only for a filter they key,
 * BetFilterConditions.counterWhere), on every row; none when the page is empty.
 */
export async function betPage(
  db: Database,
  filter: BetFilter,
  page: { after?: SortKey; direction: "ASC" | "DESC"; take: number; joins?: PageJoins; wide?: boolean; counted?: boolean },
): Promise<{ bets: BetModel[]; totalCount?: number }> {
  const joins = page.joins ?? NO_JOINS;
  const wide = page.wide ?? true;
  const values: unknown[] = [];
  const sql = pageSql(filter, page, values);
  const columns = [
    betColumns(`"Bet"`, wide ? BET_COLUMNS : NARROW_COLUMNS),
    ...(page.counted ? [`(${counterSum(filter, values)}) AS "totalCount"`] : []),
    ...(joins.network ? [`n."name" AS "networkName", n."confirmations" AS "networkConfirmations"`] : []),
    // The calldata's and the whole proof's conditions parameters: one prepared statement either way.
    ...(joins.result
      ? [resultColumns("r", `$${values.push(joins.solidityCalldata ?? true)}::boolean`, `$${values.push(joins.wholeProof ?? true)}::boolean`)]
      : []),
  ];
  const tables = [
    `"Bet"`,
    ...(joins.network ? [`LEFT JOIN "Network" n ON n."chainId" = "Bet"."chainId"`] : []),
    ...(joins.result ? [`LEFT JOIN "BetResult" r ON r."chainId" = "Bet"."chainId" AND r."betId" = "Bet"."betId"`] : []),
  ];
  const statement: ReadStatement = {
    name: `history-bet-page-${sql.shape}${Number(joins.network)}${Number(joins.result)}${wide ? "" : "n"}${page.counted ? "c" : ""}`,
    text: `SELECT ${columns.join(", ")} FROM ${tables.join(" ")} WHERE ${sql.where} ORDER BY ${sql.orderBy} LIMIT ${sql.limit}`,
  };
  const rows = await db.read<PageRow & { totalCount?: string }>(statement, values);
  const counted = rows[0]?.totalCount;
  return { bets: rows.map((row) => pageBetOf(row, wide)), ...(counted !== undefined ? { totalCount: Number(counted) } : {}) };
}

const RESULTS_BY_KEYS: ReadStatement = {
  name: "history-results-by-keys",
  text: `
    SELECT r."chainId"::text || ':' || r."betId"::text AS key, ${resultColumns("r")}
    FROM unnest($1::text[]::bigint[], $2::text[]::numeric[]) AS wanted("chainId", "betId")
    JOIN "BetResult" r ON r."chainId" = wanted."chainId" AND r."betId" = wanted."betId"`,
};

/**
 * Results by "chainId:betId" key (a DataLoader batch), null where a bet has none: for bets not read
 * by a page that joined them (the explorer, a transaction's bets, entity references). One statement
 * a batch, the ids as two arrays (as the results subgraph reads them).
 */
export async function resultsByKeys(db: Database, keys: readonly string[]): Promise<(BetResultModel | null)[]> {
  const ids = keys.map(splitBetKey);
  const rows = await db.read<ResultColumns & { key: string }>(RESULTS_BY_KEYS, [ids.map((id) => id.chainId.toString()), ids.map((id) => id.betId)]);
  const byKey = new Map(rows.map((row) => [row.key, betResultOf(row)]));
  return keys.map((key) => byKey.get(key) ?? null);
}

/** Networks' settings by chain id (a DataLoader batch), for networks not read by a page that joined them. */
export function networkSettingsOf(db: Database, chainIds: readonly number[]): Promise<NetworkSettings[]> {
  return db.prisma.network.findMany({ where: { chainId: { in: chainIds.map(BigInt) } }, select: { chainId: true, name: true, confirmations: true } });
}

/** The part of a filter the per-wallet counters are keyed by (wallet, chainId, status). */
const counterFilter = (filter: BetFilter): BetFilter => ({ ...filter, game: undefined, placedFrom: undefined, placedTo: undefined });

/** The statement summing the filter's per-wallet counters, `$n` numbered in `values`. */
function counterSum(filter: BetFilter, values: unknown[]): string {
  return `SELECT coalesce(sum("bets"), 0)::text AS "bets" FROM "PlayerBetCount" WHERE ${filterSql(counterFilter(filter), values, `"PlayerBetCount"`).join(" AND ")}`;
}

/** Filters on chainId / status alone: the sum of at most (networks × 3) counter rows kept by
 * triggers (O(1) in the wallet's bets), through the driver as the page is. With game or a time
 * range: an exact count over the wallet's index range (O(bets of the wallet)). */
export async function countBets(db: Database, conditions: BetFilterConditions): Promise<number> {
  if (!conditions.counterWhere) return db.prisma.bet.count({ where: conditions.where });
  const values: unknown[] = [];
  const statement: ReadStatement = {
    name: `history-player-bet-count-${shapeOf(counterFilter(conditions.filter), "")}`,
    text: counterSum(conditions.filter, values),
  };
  const [row] = await db.read<{ bets: string }>(statement, values);
  return Number(row?.bets ?? 0);
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

// The explorer's statements; their conditions: explorer-conditions.ts.

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

/**
 * A page in (placedAt, chainId, betId) order. Under one equality the statement names that column
 * first in ORDER BY and matches it with a two-element IN (the same value twice): PostgreSQL then
 * cannot treat the column as a constant, so only the index leading with it gives the order without
 * a sort. Otherwise the planner may walk the unfiltered index and skip the rows that do not match
 * — every newer bet of other networks, when a network's bets are older (measured: 117 ms for page
 * 1 at 1 M bets, bench/explorer.ts).
 */
export function explorerPage(
  db: Database,
  conditions: ExplorerConditions,
  page: { after?: ExplorerKey; direction: "ASC" | "DESC"; take: number },
): Promise<Bet[]> {
  const order = page.direction === "DESC" ? "desc" : "asc";
  const { lead } = conditions;
  const where: Prisma.BetWhereInput = lead ? { ...conditions.where, [lead.column]: { in: [lead.value, lead.value] } } : conditions.where;
  const orderBy: Prisma.BetOrderByWithRelationInput[] = [{ placedAt: order }, { chainId: order }, { betId: order }];
  if (lead) orderBy.unshift({ [lead.column]: order });
  return db.prisma.bet.findMany({
    where: page.after ? { AND: [where, afterKey(page.after, page.direction)] } : where,
    orderBy,
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

/** Bets whose BetPlaced, BetSettled or BetRefunded event is in the transaction (one index each), at most MAX_BETS_PER_TRANSACTION. */
export function betsInTransaction(db: Database, chainId: number, txHash: string): Promise<Bet[]> {
  return db.prisma.bet.findMany({
    where: { chainId: BigInt(chainId), OR: [{ placedTx: txHash }, { settledTx: txHash }, { refundedTx: txHash }] },
    orderBy: [{ placedAt: "asc" }, { betId: "asc" }],
    // A contract can place many bets in one transaction: the answer stays a list the cost model can price.
    take: MAX_BETS_PER_TRANSACTION,
  });
}

/** A bet as the CSV export writes it: its columns and, when settled, won / payout / verified. */
export type ExportedBet = Bet & { result: { won: boolean; payout: Prisma.Decimal; verified: boolean } | null };

/** A row of the export's page statement: the bet's columns and its result's (null when it has none). */
type ExportRow = BetRow & { won: boolean | null; payout: string | null; verified: boolean | null };

/**
 * One keyset page of a wallet's whole history (optionally one network), newest first, strictly after
 * `after`: the CSV export (GET /wallets/{address}/bets.csv) reads a wallet this way, page by page, so
 * memory stays flat whatever the wallet's size. One statement: the page of bets from the playerBets
 * indexes, each joined to its result by the BetResult key. (Prisma's relation load sent the page's
 * keys as two IN lists, which PostgreSQL planned as a scan of every result: 0.7 s a page at 1 M bets.)
 */
export function walletBetsPage(
  db: Database,
  query: { wallet: string; chainId?: number; after?: SortKey; take: number; signal?: AbortSignal },
): Promise<ExportedBet[]> {
  const values: unknown[] = [];
  const sql = pageSql({ wallet: query.wallet, chainId: query.chainId }, { after: query.after, direction: "DESC", take: query.take }, values);
  const statement: ReadStatement = {
    name: `history-export-page-${sql.shape}`,
    // The page statement's own conditions and order (qualified by "Bet"), joined as betPage joins.
    text: `SELECT ${betColumns(`"Bet"`)}, r."won", r."payout"::text AS "payout", r."verified"
      FROM "Bet" LEFT JOIN "BetResult" r ON r."chainId" = "Bet"."chainId" AND r."betId" = "Bet"."betId"
      WHERE ${sql.where} ORDER BY ${sql.orderBy} LIMIT ${sql.limit}`,
  };
  const read = async () =>
    (await db.read<ExportRow>(statement, values)).map(
      ({ won, payout, verified, ...bet }): ExportedBet => ({
        ...betOf(bet),
        result: won === null || payout === null || verified === null ? null : { won, payout: new Prisma.Decimal(payout), verified },
      }),
    );
  // An export whose client left: its statement is cancelled, or never sent (core/cancellable-queries.ts).
  return query.signal ? cancellable(query.signal, read) : read();
}
