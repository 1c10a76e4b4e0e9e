// Filtered playerBets at scale (issue 10, item 4): the worst filtered requests next to an
// unfiltered page of the same wallet, one alias and 30 aliases, p50 side by side.
//
//   npx tsx bench/filters.ts [--bets 1000000] [--runs 7] [--reuse] [--keep]
//
// The data set is bench/scale-data.ts's (the biggest wallet holds 55% of the bets, three games
// with a third each, four chains) in its own database `bench_filters_<bets>` on
// BENCH_DATABASE_URL's server; the stack runs in this process as production runs it, with the
// default query limits and DATABASE_STATEMENT_TIMEOUT_MS. The criterion: the worst
// filtered request with 30 aliases is refused, or answers within 2× of an unfiltered page.
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { benchConfig, fmt, log, median, post, requestBody, startBenchStack, table } from "./common.ts";
import { DEFAULT_PENDING_TAIL, generateScaleDataset, isGenerated, scaleWallet, type ScaleOptions } from "./scale-data.ts";

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "1000000" },
    runs: { type: "string", default: "7" },
    reuse: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const bets = Number(args.bets);
const runs = Number(args.runs);
if (!Number.isSafeInteger(bets) || bets < 1000 || !Number.isSafeInteger(runs) || runs < 1) throw new Error("--bets ≥ 1000 and --runs ≥ 1");

const server = benchConfig.BENCH_DATABASE_URL;
const name = `bench_filters_${bets}`;
const options: ScaleOptions = { bets, pendingTail: DEFAULT_PENDING_TAIL };
if (!(args.reuse && (await isGenerated(server, name, options)))) {
  const started = performance.now();
  await generateScaleDataset(server, name, options, (line) => log(`  ${line}`));
  log(`generated ${bets} bets in ${fmt.ms(performance.now() - started)}`);
}
const db = await openDatabase({ url: databaseUrl(name, server), statementTimeoutMs: loadConfig(["shared"]).DATABASE_STATEMENT_TIMEOUT_MS });
const stack = await startBenchStack(db, silentLogger());
const url = `${stack.url}/graphql`;
const wallet = scaleWallet(0);
const walletBets = await db.prisma.bet.count({ where: { player: wallet } });
const [oldest] = await db.prisma.bet.findMany({ where: { player: wallet }, orderBy: { placedAt: "asc" }, take: 1, select: { placedAt: true } });
const from = String(oldest?.placedAt ?? 0n);
const to = String((oldest?.placedAt ?? 0n) + 60n);

/** The same page selection everywhere; filtered shapes add totalCount, the part no counter serves. */
const page = (alias: string, filter: string, count: boolean) =>
  `${alias}playerBets(wallet: "${wallet}", first: 100${filter}) { ${count ? "totalCount " : ""}nodes { chainId betId status game placedAt } }`;
const aliased = (n: number, filter: string, count: boolean) => `{ ${Array.from({ length: n }, (_, i) => page(`a${i}: `, filter, count)).join(" ")} }`;

const SHAPES: [string, string, boolean][] = [
  ["no filter (baseline)", "", false],
  ["no filter + totalCount (counters)", "", true],
  ["game (a third of the wallet) + totalCount", `, filter: { game: "dice" }`, true],
  ["game matching nothing + totalCount", `, filter: { game: "poker" }`, true],
  ["oldest minute, newest first + totalCount", `, filter: { placedFrom: "${from}", placedTo: "${to}" }`, true],
  ["oldest minute, game, newest first + totalCount", `, filter: { game: "wheel", placedFrom: "${from}", placedTo: "${to}" }`, true],
];

/** p50 of `runs` requests after one warm-up, and the outcome ("200 data", "400 QUERY_TOO_COMPLEX", …). */
async function measure(query: string): Promise<{ outcome: string; p50: number }> {
  const times: number[] = [];
  let outcome = "";
  for (let i = 0; i < runs + 1; i++) {
    const started = performance.now();
    const { status, json } = await post(url, requestBody(query, {}), 120_000);
    const elapsed = performance.now() - started;
    outcome = json.errors?.length ? `${status} ${String(json.errors[0]?.extensions?.code)}` : `${status} data`;
    if (i > 0) times.push(elapsed); // the first run warms the caches
  }
  return { outcome, p50: median(times) };
}

/** The most aliases of a shape the gateway accepts (refusals cost no database work). */
async function mostAccepted(filter: string, count: boolean): Promise<number> {
  for (let n = 30; n > 1; n--) {
    const { json } = await post(url, requestBody(aliased(n, filter, count), {}));
    if (json.errors?.[0]?.extensions?.code !== "QUERY_TOO_COMPLEX") return n;
  }
  return 1;
}

log(`${bets} bets; wallet ${wallet} holds ${walletBets}; ${runs} runs each after one warm-up; p50 in ms`);
// One pass over every shape first, so the first rows do not pay for cold caches.
for (const [, filter, count] of SHAPES) await post(url, requestBody(aliased(1, filter, count), {}), 120_000);
const rows: string[][] = [];
let baseline = Number.NaN;
let baselineMost = Number.NaN;
let pass = true;
for (const [label, filter, count] of SHAPES) {
  const one = await measure(aliased(1, filter, count));
  const thirty = await measure(aliased(30, filter, count));
  const most = await mostAccepted(filter, count);
  const many = await measure(aliased(most, filter, count));
  if (Number.isNaN(baseline)) {
    baseline = one.p50;
    baselineMost = many.p50 / most;
  }
  // The criterion: refused at 30 aliases, or within 2× of one unfiltered page.
  if (thirty.outcome.endsWith("data") && thirty.p50 > 2 * baseline) pass = false;
  rows.push([
    label,
    fmt.ms(one.p50),
    fmt.ratio(one.p50 / baseline),
    thirty.outcome.endsWith("data") ? fmt.ms(thirty.p50) : thirty.outcome,
    String(most),
    fmt.ms(many.p50),
    fmt.ratio(many.p50 / most / baselineMost),
  ]);
}
log(
  table(["request (first: 100)", "1 alias p50", "vs unfiltered", "30 aliases", "most aliases accepted", "their p50", "per alias vs unfiltered"], rows, [
    false,
    true,
    true,
    false,
    true,
    true,
    true,
  ]),
);
log(`criterion (every filtered request with 30 aliases refused, or within 2× of one unfiltered page): ${pass ? "PASS" : "FAIL"}`);

await stack.stop();
await db.close();
if (!args.keep && !args.reuse) await dropPostgresDatabase(name, server);
