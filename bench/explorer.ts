// The explorer (`bets`, issue 14) at scale: page 1 000 against page 1 under no filter and under
// each single filter, the SQL the resolver really sends, timed on one connection (no HTTP).
//
//   npx tsx bench/explorer.ts [--bets 1000000] [--runs 21] [--reuse] [--keep]
//
// The data set is bench/scale-data.ts's (four chains, three games, one token besides the native
// coin, a pending tail, the biggest wallet holding 55% of the bets) in its own database
// `bench_explorer_<bets>` on BENCH_DATABASE_URL's server. The criterion: every page 1 000 within
// 1.2× of its page 1 in executor time (keyset pagination: no OFFSET, the index range starts at the cursor).
import { parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../core/db.ts";
import { databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { benchConfig, fmt, log, median, table } from "./common.ts";
import { DEFAULT_PENDING_TAIL, generateScaleDataset, isGenerated, SCALE_CHAINS, scaleWallet, type ScaleOptions } from "./scale-data.ts";
import { captureExplorerPage, explorerCursorAfter } from "./scale-explain.ts";

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "1000000" },
    runs: { type: "string", default: "41" },
    reuse: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const bets = Number(args.bets);
const runs = Number(args.runs);
if (!Number.isSafeInteger(bets) || bets < 100_000 || !Number.isSafeInteger(runs) || runs < 1) throw new Error("--bets ≥ 100000 and --runs ≥ 1");

const PAGE = 20; // the default `first`
const DEEP_PAGE = 1000;
const server = benchConfig.BENCH_DATABASE_URL;
const name = `bench_explorer_${bets}`;
const options: ScaleOptions = { bets, pendingTail: DEFAULT_PENDING_TAIL };
if (!(args.reuse && (await isGenerated(server, name, options)))) {
  const started = performance.now();
  await generateScaleDataset(server, name, options, (line) => log(`  ${line}`));
  log(`generated ${bets} bets in ${fmt.ms(performance.now() - started)}`);
}
const url = databaseUrl(name, server);
// Applies the explorer migration when the database was generated before it existed.
await (await openDatabase({ url, migrate: true })).close();

const sql = new pg.Client({ connectionString: url });
await sql.connect();
await sql.query(`ANALYZE "Bet"`);
const [{ token }] = (await sql.query<{ token: string }>(`SELECT token FROM "Bet" WHERE token <> '0x${"0".repeat(40)}' LIMIT 1`)).rows as [{ token: string }];
const [{ t }] = (await sql.query<{ t: string }>(`SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY "placedAt")::text AS t FROM "Bet"`)).rows as [
  { t: string },
];

const FILTERS: [string, Record<string, unknown> | undefined][] = [
  ["no filter", undefined],
  [`chainId ${SCALE_CHAINS[1].chainId} (20%)`, { chainId: SCALE_CHAINS[1].chainId }],
  ["status SETTLED", { status: ["SETTLED"] }],
  ["status REFUNDED", { status: ["REFUNDED"] }],
  ["game dice", { game: "dice" }],
  ["player: the biggest wallet", { player: scaleWallet(0) }],
  ["player: a 1% wallet", { player: scaleWallet(3) }],
  ["token (non-native)", { token }],
  ["placedTo: the older half", { placedTo: t }],
  ["game wheel + placedTo", { game: "wheel", placedTo: t }],
];

/** Medians of the two statements run in turn (one warm-up each), so that load from elsewhere on
 * the machine weighs on both alike. */
async function timePair(a: { sql: string; params: unknown[] }, b: { sql: string; params: unknown[] }): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let k = 0; k < runs + 1; k++) {
    for (const [i, statement] of [a, b].entries()) {
      const started = performance.now();
      await sql.query(statement.sql, statement.params);
      if (k > 0) times[i]!.push(performance.now() - started); // the first run warms the caches
    }
  }
  return [median(times[0]), median(times[1])];
}

/** The executor's own time (EXPLAIN ANALYZE), without the client round trip. */
async function executionMs(statement: { sql: string; params: unknown[] }): Promise<number> {
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const plan = (await sql.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE) ${statement.sql}`, statement.params)).rows
      .map((r) => r["QUERY PLAN"])
      .join("\n");
    times.push(Number(plan.match(/Execution Time: ([\d.]+) ms/)?.[1] ?? Number.NaN));
  }
  return median(times);
}

log(
  `${bets} bets; page ${DEEP_PAGE} (after ${fmt.int((DEEP_PAGE - 1) * PAGE)} bets) vs page 1, first: ${PAGE}, newest first; median of ${runs} runs each, page 1 and page 1 000 in turn, ms`,
);
const rows: string[][] = [];
let pass = true;
for (const [label, filter] of FILTERS) {
  const cursor = await explorerCursorAfter(url, filter, (DEEP_PAGE - 1) * PAGE);
  if (!cursor) {
    rows.push([label, "—", "—", "—", "fewer bets than page 1 000", ""]);
    continue;
  }
  const first = await captureExplorerPage(url, { first: PAGE, filter });
  const deep = await captureExplorerPage(url, { first: PAGE, filter, after: cursor });
  const [firstMs, deepMs] = await timePair(first, deep);
  const [firstExec, deepExec] = [await executionMs(first), await executionMs(deep)];
  const plan = (await sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${deep.sql}`, deep.params)).rows.map((r) => r["QUERY PLAN"]).join("\n");
  const index = plan.match(/using "?(\w+)"?/)?.[1] ?? "?";
  // On the executor's time: the round trip (≈0.5 ms here) is the same for both and only adds
  // noise. Below 0.1 ms the timer's resolution matters: allow 0.05 ms on top of the ratio.
  const ok = deepExec <= firstExec * 1.2 + 0.05;
  if (!ok) pass = false;
  rows.push([
    label,
    fmt.ms(firstMs),
    fmt.ms(deepMs),
    fmt.ratio(deepMs / firstMs),
    `${firstExec.toFixed(3)} / ${deepExec.toFixed(3)}`,
    `${index}${/Sort/.test(plan) ? " + Sort" : ""}${ok ? "" : " FAIL"}`,
  ]);
}
log(table(["filter", "page 1", `page ${DEEP_PAGE}`, "ratio", "executor ms (1 / 1 000)", "index (page 1 000)"], rows, [false, true, true, true, true, false]));
log(`criterion (page ${DEEP_PAGE} within 1.2× of page 1 under every single filter): ${pass ? "PASS" : "FAIL"}`);

await sql.end();
if (!args.keep && !args.reuse) await dropPostgresDatabase(name, server);
