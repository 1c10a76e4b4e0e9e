// EXPLAIN (ANALYZE, BUFFERS) of the SQL the measured resolvers really send (bench/scale.ts): each
// resolver runs once against the bench database with a Prisma client that records its statements.
import pg from "pg";
import type { Database } from "../core/db.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { betKey } from "../subgraphs/kit/bet-key.ts";
import { BetConnection } from "../subgraphs/history/resolvers/BetConnection.ts";
import { pendingBetCount } from "../subgraphs/history/resolvers/Query/pendingBetCount.ts";
import { bets } from "../subgraphs/history/resolvers/Query/bets.ts";
import { playerBets } from "../subgraphs/history/resolvers/Query/playerBets.ts";
import type { BetConnectionModel } from "../subgraphs/history/mappers.ts";
import { createResultsContext } from "../subgraphs/results/context.ts";
import { captureSql, type CapturedQuery } from "./common.ts";

export interface ExplainInput {
  whale: string;
  whaleChainId: number;
  normal: { wallet: string; chainId: number };
  pageSize: number;
  deepCursor: string;
  lastCursor: string;
  betResults: { chainId: number; betIds: string[] };
}

export interface Explained {
  name: string;
  query: CapturedQuery;
  plan: string[];
  executionMs: number;
  /** Index names the plan reads. */
  indexes: string[];
  /** What does not scale: Seq Scan, Sort, many heap fetches, many rows read and thrown away. */
  flags: string[];
}

type Resolver = (parent: unknown, args: unknown, ctx: unknown, info: unknown) => Promise<unknown>;

/** The database and what NetworkDirectory reads through it are all these paths use. */
function contextOf(db: Database) {
  return { db, networks: new NetworkDirectory(db), logger: undefined, production: true };
}

/** The statement of a capture that reads bets (the network lookups before it are not the point). */
function betStatement(captured: CapturedQuery[], pattern = /"Bet"/): CapturedQuery {
  const hit = captured.filter((q) => pattern.test(q.sql) && !/"Network"|"IndexingCursor"/.test(q.sql)).at(-1);
  if (!hit) throw new Error(`no statement matching ${pattern} was captured (${captured.length} statements)`);
  return hit;
}

/** The statement `playerBets` (and with `withCount`, its `totalCount`) sends; also used by subgraphs/history/keyset-plan.pg.test.ts. */
export async function capturePage(
  url: string,
  wallet: string,
  first: number,
  after: string | null,
  withCount = false,
  filter?: { game?: string; chainId?: number; status?: string[] },
): Promise<CapturedQuery> {
  const captured = await captureSql(url, async (db) => {
    const ctx = contextOf(db);
    const page = (await (playerBets as unknown as Resolver)({}, { wallet, first, after, orderDirection: "DESC", filter }, ctx, {})) as BetConnectionModel;
    if (withCount) await (BetConnection.totalCount as unknown as Resolver)(page, {}, ctx, {});
  });
  // totalCount: COUNT over "Bet", or the sum over "PlayerBetCount".
  return betStatement(captured, withCount ? /count/i : /"Bet"/);
}

/** The statement `bets` sends for one page (with `withCount`, its totalCount's); also used by subgraphs/history/explorer-plan.pg.test.ts. */
export async function captureExplorerPage(
  url: string,
  args: { first: number; after?: string | null; filter?: Record<string, unknown>; orderDirection?: "ASC" | "DESC" },
  withCount = false,
): Promise<CapturedQuery> {
  const captured = await captureSql(url, async (db) => {
    const ctx = contextOf(db);
    const page = (await (bets as unknown as Resolver)({}, { orderDirection: "DESC", ...args }, ctx, {})) as BetConnectionModel;
    if (withCount) await (BetConnection.totalCount as unknown as Resolver)(page, {}, ctx, {});
  });
  return betStatement(captured, withCount ? /count|sum/i : /"Bet"/);
}

/** The endCursor after the first `rows` bets of `bets` under `filter` (whole pages of 100, newest first). */
export async function explorerCursorAfter(url: string, filter: Record<string, unknown> | undefined, rows: number): Promise<string | null> {
  let after: string | null = null;
  await captureSql(url, async (db) => {
    const ctx = contextOf(db);
    for (let read = 0; read < rows; read += 100) {
      const page = (await (bets as unknown as Resolver)(
        {},
        { first: Math.min(100, rows - read), after, filter, orderDirection: "DESC" },
        ctx,
        {},
      )) as BetConnectionModel;
      const last = page.rows.at(-1);
      if (!last) break;
      after = page.cursorFor(last);
    }
  });
  return after;
}

async function capturePending(url: string, wallet: string, chainId: number | null): Promise<CapturedQuery> {
  const captured = await captureSql(url, (db) => (pendingBetCount as unknown as Resolver)({}, { wallet, chainId }, contextOf(db), {}));
  return betStatement(captured);
}

async function captureResults(url: string, chainId: number, betIds: string[]): Promise<CapturedQuery> {
  const captured = await captureSql(url, async (db) => {
    const ctx = createResultsContext({ ...contextOf(db), logger: undefined as never });
    await ctx.betWithResult.loadMany(betIds.map((id) => betKey(chainId, id)));
  });
  return betStatement(captured);
}

function summarise(name: string, query: CapturedQuery, plan: string[]): Explained {
  const text = plan.join("\n");
  const flags: string[] = [];
  if (/Seq Scan/.test(text)) flags.push("Seq Scan");
  if (/(->|^)\s*Sort\b|Sort Method/m.test(text)) flags.push("Sort");
  const heap = Math.max(0, ...[...text.matchAll(/Heap Fetches: (\d+)/g)].map((m) => Number(m[1])));
  if (heap > 1000) flags.push(`Heap Fetches ${heap}`);
  const removed = Math.max(0, ...[...text.matchAll(/Rows Removed by Filter: (\d+)/g)].map((m) => Number(m[1])));
  if (removed > 1000) flags.push(`Rows Removed by Filter ${removed}`);
  const read = Math.max(0, ...[...text.matchAll(/Index Only Scan.*actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/g)].map((m) => Number(m[1])));
  if (read > 10_000) flags.push(`counts ${read} index entries per request (O(n))`);
  const executionMs = Number(text.match(/Execution Time: ([\d.]+) ms/)?.[1] ?? Number.NaN);
  const indexes = [...new Set([...text.matchAll(/using "?([\w]+)"?/g)].map((m) => m[1]!))];
  return { name, query, plan, executionMs, indexes, flags };
}

/** Captures and EXPLAINs every measured resolver's SQL on the database at `url`. */
export async function explainResolvers(url: string, input: ExplainInput): Promise<Explained[]> {
  const statements: [string, CapturedQuery][] = [
    ["playerBets whale page 1", await capturePage(url, input.whale, input.pageSize, null)],
    ["playerBets whale deep page", await capturePage(url, input.whale, input.pageSize, input.deepCursor)],
    ["playerBets whale last page", await capturePage(url, input.whale, input.pageSize, input.lastCursor)],
    ["pendingBetCount whale", await capturePending(url, input.whale, null)],
    ["pendingBetCount whale + chainId", await capturePending(url, input.whale, input.whaleChainId)],
    ["pendingBetCount normal", await capturePending(url, input.normal.wallet, null)],
    ["pendingBetCount normal + chainId", await capturePending(url, input.normal.wallet, input.normal.chainId)],
    ["betResults ×100 (and _entities of a page)", await captureResults(url, input.betResults.chainId, input.betResults.betIds)],
    ["totalCount whale (counter)", await capturePage(url, input.whale, 1, null, true)],
    ["totalCount whale, game filter (row count)", await capturePage(url, input.whale, 1, null, true, { game: "dice" })],
    ["totalCount normal (counter)", await capturePage(url, input.normal.wallet, 1, null, true)],
  ];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Explained[] = [];
    for (const [name, query] of statements) {
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, query.params);
      out.push(
        summarise(
          name,
          query,
          rows.map((r) => r["QUERY PLAN"]),
        ),
      );
    }
    return out;
  } finally {
    await client.end().catch(() => undefined);
  }
}
