// GraphQL load benchmark of the federated API: gateway vs direct subgraph, page 1 vs a deep page.
//
//   npx tsx bench/graphql.ts [--bets 100000] [--duration 10] [--connections 10] [--warmup 2]
//                            [--runs 2] [--deep-page 1000] [--keep]
//
// Creates a fresh PostgreSQL database `bench_graphql` on BENCH_DATABASE_URL's server (default
// postgresql://postgres@127.0.0.1:5432/postgres), seeds the fixture set into it, serves the stack
// in a child process (bench/serve.ts) and drives it with autocannon from this process. See
// bench/README.md for how to read the output.
import { mkdirSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../core/db.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { readProofCache, writeProofCache, type ProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { databaseUrl, dropPostgresDatabase, recreatePostgresDatabase, withAdmin } from "../test/db.ts";
import {
  benchConfig,
  captureSql,
  fmt,
  log,
  median,
  post,
  requestBody,
  safeUrl,
  serveStack,
  stopChild,
  table,
  type CapturedQuery,
  type GraphQLBody,
  type Served,
} from "./common.ts";
import { backendPids, checkResponse, errorCount, printProfile, runBenchmark, runLoad, type CpuGroups, type RunStats as LoadRunStats } from "./load.ts";

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "100000" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    runs: { type: "string", default: "2" },
    "deep-page": { type: "string", default: "1000" },
    "page-size": { type: "string", default: "50" },
    "whale-share": { type: "string", default: "0.6" },
    "proven-limit": { type: "string", default: "100" },
    keep: { type: "boolean", default: false },
    only: { type: "string", default: "a,b,c" },
    profile: { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
  },
});

function positiveInt(name: string, raw: string | undefined, min = 1): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${raw}`);
  return value;
}

const BETS = positiveInt("bets", args.bets);
const DURATION = positiveInt("duration", args.duration);
const CONNECTIONS = positiveInt("connections", args.connections);
const WARMUP = positiveInt("warmup", args.warmup, 0);
const RUNS = positiveInt("runs", args.runs);
const DEEP_PAGE = positiveInt("deep-page", args["deep-page"], 2);
const PAGE_SIZE = positiveInt("page-size", args["page-size"]);
const WHALE_SHARE = Number(args["whale-share"]);
const PROVEN_LIMIT = positiveInt("proven-limit", args["proven-limit"], 0);
const KEEP = args.keep ?? false;
const ONLY = new Set(
  (args.only ?? "a,b,c")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean),
);
const PROFILE = args.profile ?? false;
const REUSE = args.reuse ?? false;
for (const x of ONLY) if (!["a", "b", "c"].includes(x)) throw new Error(`--only takes a comma list of a, b, c; got ${x}`);

const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const DB_NAME = "bench_graphql";
const CHAIN_ID = 31337;
/** Proofs proved by an earlier bench run, beyond the committed cache (git-ignored). */
const LOCAL_PROOF_CACHE = new URL("./.cache/proofs.json", import.meta.url);
/** --profile: the server child writes a V8 CPU profile here. */
const PROFILE_DIR = fileURLToPath(new URL("./.cache/profiles/", import.meta.url));

/** Sequential requests per unloaded-latency probe. */
const PROBES = 60;

/** Targets of the issue. */
const TARGET_GATEWAY_SHARE = 0.5;
const TARGET_DEEP_FACTOR = 1.2;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// GraphQL over fetch (checks, page walk, unloaded latencies)
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

const BET_RESULTS = `query BenchBetResults($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) { betId result { outcome won payout proof { piA piB piC publicSignals verified } } }
}`;

const PLAYER_BETS_GATEWAY = `query BenchPlayerBets($wallet: Address!, $first: Int!, $after: String) {
  playerBets(wallet: $wallet, first: $first, after: $after) {
    nodes { chainId betId player stake status placedBlock result { outcome proof { piA publicSignals } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The same page with only what history owns (a subgraph cannot resolve `result`). */
const PLAYER_BETS_HISTORY = `query BenchPlayerBets($wallet: Address!, $first: Int!, $after: String) {
  playerBets(wallet: $wallet, first: $first, after: $after) {
    nodes { chainId betId player stake status placedBlock }
    pageInfo { hasNextPage endCursor }
  }
}`;

const PAGE_WALK = `query BenchWalk($wallet: Address!, $first: Int!, $after: String) {
  playerBets(wallet: $wallet, first: $first, after: $after) { pageInfo { endCursor } }
}`;

/** What the gateway asks the results subgraph for after a playerBets page (for the breakdown). */
const RESULTS_ENTITIES = `query BenchEntities($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Bet { result { outcome proof { piA publicSignals } } } }
}`;

// ---------------------------------------------------------------------------------------------
// Load runs
// ---------------------------------------------------------------------------------------------

interface Scenario {
  /** Unique key of the scenario (results are kept under it). */
  key?: string;
  /** Short name shown in progress lines. */
  id: string;
  label: string;
  endpoint: string;
  url: string;
  body: string;
  /** A problem with a correct-looking response body, or null. */
  check: (json: GraphQLBody) => string | null;
  /** Filled in by the pre-check. */
  problem?: string | null;
  note?: string;
}

interface RunStats extends LoadRunStats {
  /** CPU of the server child per completed request (gateway + subgraphs: one process), ms. */
  serverCpuMs: number;
  /** CPU of the PostgreSQL backends serving the bench database per completed request, ms. */
  pgCpuMs: number;
}

/** Whose CPU a request costs: the server child, and the PostgreSQL backends of its pool. */
let cpuGroups: CpuGroups = {};

/** One autocannon run, with the CPU it cost the server child and PostgreSQL per request. */
async function load(scenario: Scenario, seconds: number): Promise<RunStats> {
  const stats = await runLoad({ url: scenario.url, bodies: [scenario.body], connections: CONNECTIONS, seconds, cpu: cpuGroups });
  return { ...stats, serverCpuMs: stats.cpuMs.server ?? Number.NaN, pgCpuMs: stats.cpuMs.pg ?? Number.NaN };
}

/** Checks one response body of the scenario before it is measured. */
async function precheck(scenario: Scenario): Promise<void> {
  const problem = await checkResponse(scenario.url, scenario.body, scenario.check);
  scenario.problem = problem;
  log(`  check ${scenario.id.padEnd(12)} ${scenario.endpoint.padEnd(8)} ${problem ? `FAIL: ${problem}` : `ok${scenario.note ? ` (${scenario.note})` : ""}`}`);
}

const results = new Map<string, RunStats[]>();

/** A/B pair, interleaved: A, B, A, B … each run after its own warm-up. */
async function runPair(a: Scenario, b: Scenario): Promise<void> {
  for (let run = 1; run <= RUNS; run++) {
    for (const scenario of [a, b]) {
      if (WARMUP > 0) await load(scenario, WARMUP);
      const stats = await load(scenario, DURATION);
      results.set(scenario.key!, [...(results.get(scenario.key!) ?? []), stats]);
      loadPeak = Math.max(loadPeak, stats.load1);
      const errors = errorCount(stats);
      log(
        `  run ${run}/${RUNS} ${scenario.id.padEnd(7)} ${scenario.endpoint.padEnd(8)} ${fmt.rps(stats.rps).padStart(7)} req/s  p50 ${fmt.ms(stats.p50).padStart(7)} ms  p99 ${fmt.ms(stats.p99).padStart(7)} ms  errors ${errors}` +
          `  | cpu/req server ${fmt.ms(stats.serverCpuMs)} ms, pg ${fmt.ms(stats.pgCpuMs)} ms; load generator ${Math.round(stats.benchCpuShare * 100)}% of a core; loadavg ${stats.load1.toFixed(1)}` +
          `${errors ? ` (non-2xx ${stats.non2xx}, socket ${stats.socketErrors}, timeouts ${stats.timeouts}, GraphQL ${stats.graphqlErrors})` : ""}`,
      );
    }
  }
}

/** (max − min) / median of the runs' req/s. */
function spreadOf(xs: number[]): number {
  return xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

function spread(xs: number[]): string {
  return xs.length < 2 ? "—" : `${Math.round(spreadOf(xs) * 100)}%`;
}

/** Highest 1-minute load average seen at the end of a measured run. */
let loadPeak = 0;

interface Summary {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  failing: boolean;
  serverCpuMs: number;
  pgCpuMs: number;
  runs: number[];
}

function summary(scenario: Scenario): Summary {
  const runs = results.get(scenario.key!) ?? [];
  const errors = runs.reduce((sum, r) => sum + errorCount(r), 0);
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors,
    failing: errors > 0 || Boolean(scenario.problem) || runs.length === 0,
    serverCpuMs: median(runs.map((r) => r.serverCpuMs)),
    pgCpuMs: median(runs.map((r) => r.pgCpuMs)),
    runs: runs.map((r) => r.rps),
  };
}

/** Median latency of `n` sequential requests (no concurrency): where the time goes, unloaded. */
async function sequentialMs(url: string, body: string, n: number): Promise<number> {
  for (let i = 0; i < 10; i++) await post(url, body);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const { json } = await post(url, body);
    times.push(performance.now() - started);
    if (json.errors?.length) throw new Error(`unloaded probe failed: ${json.errors[0]!.message}`);
  }
  return median(times);
}

// ---------------------------------------------------------------------------------------------
// The child process serving the stack
// ---------------------------------------------------------------------------------------------

async function serve(url: string): Promise<Served> {
  const profiling = PROFILE ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR] : [];
  if (PROFILE) mkdirSync(PROFILE_DIR, { recursive: true });
  return serveStack(url, profiling);
}

// ---------------------------------------------------------------------------------------------
// EXPLAIN of the deep page, with the SQL Prisma actually sends
// ---------------------------------------------------------------------------------------------

/** Runs the history subgraph's playerBets resolver once with a logging Prisma client and returns its SQL. */
async function capturePlayerBetsSql(url: string, wallet: string, after: string | null): Promise<CapturedQuery | null> {
  try {
    const { playerBets } = await import("../subgraphs/history/resolvers/Query/playerBets.ts");
    const resolver = playerBets as unknown as (parent: unknown, args: unknown, ctx: unknown, info: unknown) => Promise<unknown>;
    const captured = await captureSql(url, async (db) => {
      await resolver({}, { wallet, first: PAGE_SIZE, after, orderDirection: "DESC" }, { db, networks: new NetworkDirectory(db) }, {});
    });
    return captured.find((q) => /FROM\s+"public"\."Bet"|FROM\s+"Bet"/i.test(q.sql)) ?? null;
  } catch (error) {
    log(`  (could not capture Prisma's SQL: ${(error as Error).message}; using the hand-written mirror)`);
    return null;
  }
}

/** The hand-written mirror of Prisma's keyset query (fallback when capturing fails). */
function mirrorSql(wallet: string, key: { b: string; l: number; c: string }): CapturedQuery {
  return {
    sql: `SELECT "chainId", "betId", "player", "stake", "status", "placedBlock", "placedLogIndex", "lastChangeBlock" FROM "Bet"
WHERE "player" = $1 AND "placedBlock" <= $2
  AND (("placedBlock" < $2) OR ("placedBlock" = $2 AND "placedLogIndex" < $3) OR ("placedBlock" = $2 AND "placedLogIndex" = $3 AND "chainId" < $4))
ORDER BY "placedBlock" DESC, "placedLogIndex" DESC, "chainId" DESC LIMIT ${PAGE_SIZE + 1}`,
    params: [wallet, key.b, key.l, key.c],
  };
}

function decodeCursorKey(cursor: string): { b: string; l: number; c: string } {
  return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { b: string; l: number; c: string };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

let served: Served | undefined;
let created = false;
let cleaning: Promise<void> | undefined;

async function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    if (served) await stopChild(served.child).catch((e: unknown) => log(`could not stop the server child: ${String(e)}`));
    if (created && !KEEP) {
      await dropPostgresDatabase(DB_NAME, SERVER_URL).then(
        () => log(`dropped database ${DB_NAME}`),
        (e: unknown) => log(`could not drop database ${DB_NAME}: ${String(e)}`),
      );
    } else if (created) {
      log(`kept database ${DB_NAME} (${safeUrl(databaseUrl(DB_NAME, SERVER_URL))})`);
    }
  })();
  return cleaning;
}

async function main(): Promise<boolean> {
  const benchUrl = databaseUrl(DB_NAME, SERVER_URL);
  const started = performance.now();
  log("Public Bet Results API — GraphQL benchmark");
  log(`  database  ${safeUrl(benchUrl)} (fresh${KEEP ? ", kept at the end" : ", dropped at the end"})`);
  log(
    `  load      autocannon ${CONNECTIONS} connections, POST, ${DURATION} s per run after a ${WARMUP} s warm-up; ${RUNS} interleaved runs per A/B pair, median reported`,
  );
  log(
    `  host      ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "?"}); server, PostgreSQL and load generator share them; loadavg at start ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  log();

  // 1. A fresh, migrated, seeded database (or, with --reuse, the one a --keep run left) ---------
  let whale: string;
  if (REUSE) {
    const exists = await withAdmin(async (admin) => (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME])).rowCount === 1, SERVER_URL);
    if (!exists) throw new Error(`--reuse: there is no database ${DB_NAME}; run once with --keep first`);
    created = true; // dropped at the end unless --keep, like a fresh one
    log(`reusing database ${DB_NAME} as a --keep run left it (not reseeded; --bets/--whale-share/--proven-limit are ignored)`);
  } else {
    await recreatePostgresDatabase(DB_NAME, SERVER_URL);
    created = true;
  }

  const sql = new pg.Client({ connectionString: benchUrl, application_name: "bench-graphql" });
  try {
    if (REUSE) {
      await (await openDatabase({ url: benchUrl, migrate: true })).close(); // newer migrations, if any
      await sql.connect();
      whale = (await sql.query<{ player: string }>(`SELECT "player" FROM "Bet" GROUP BY "player" ORDER BY count(*) DESC LIMIT 1`)).rows[0]!.player;
    } else {
      const committed = readProofCache();
      const cache: ProofCache = new Map(committed);
      for (const [key, proof] of readProofCache(LOCAL_PROOF_CACHE)) if (!cache.has(key)) cache.set(key, proof);
      const cachedBefore = cache.size;

      log(`seeding ${fmt.int(BETS)} bets (whale share ${WHALE_SHARE}, proven limit ${PROVEN_LIMIT}, no outbox) …`);
      const migrateStarted = performance.now();
      const db = await openDatabase({ url: benchUrl, migrate: true });
      const migrateMs = performance.now() - migrateStarted;
      const seedStarted = performance.now();
      const fixtures = await seedFixtures(db, { bets: BETS, whaleShare: WHALE_SHARE, provenLimit: PROVEN_LIMIT, outbox: false, proofCache: cache });
      const seedMs = performance.now() - seedStarted;
      await releaseProverResources();
      if (fixtures.provedNow > 0) {
        mkdirSync(new URL("./.cache/", import.meta.url), { recursive: true });
        writeProofCache(new Map([...cache].filter(([key]) => !committed.has(key))), LOCAL_PROOF_CACHE);
      }
      const analyzeStarted = performance.now();
      await db.prisma.$executeRawUnsafe("ANALYZE");
      const analyzeMs = performance.now() - analyzeStarted;
      await db.close();
      await sql.connect();
      whale = fixtures.whale;
      log(
        `  migrated in ${fmt.s(migrateMs)}; seeded in ${fmt.s(seedMs)} (generate + insert + verify ${fixtures.proven} proofs: ${fixtures.proven - fixtures.provedNow} cached` +
          ` [committed cache ${committed.size}, bench cache ${cachedBefore - committed.size}], ${fixtures.provedNow} proved now` +
          `${fixtures.provedNow ? " and saved to bench/.cache/proofs.json" : ""}); ANALYZE ${fmt.s(analyzeMs)}`,
      );
    }
    const counts = (await sql.query<{ status: string; n: string }>(`SELECT "status"::text AS status, count(*) AS n FROM "Bet" GROUP BY 1 ORDER BY 1`)).rows;
    const totalBets = counts.reduce((sum, r) => sum + Number(r.n), 0);
    const whaleBets = Number((await sql.query<{ n: string }>(`SELECT count(*) AS n FROM "Bet" WHERE "player" = $1`, [whale])).rows[0]!.n);
    const sizes = (
      await sql.query<{ bet: string; result: string; db: string }>(
        `SELECT pg_size_pretty(pg_total_relation_size('"Bet"')) AS bet, pg_size_pretty(pg_total_relation_size('"BetResult"')) AS result,
              pg_size_pretty(pg_database_size(current_database())) AS db`,
      )
    ).rows[0]!;
    log(
      `  bets ${fmt.int(totalBets)}: ${counts.map((r) => `${r.status} ${fmt.int(Number(r.n))}`).join(", ")}; sizes Bet ${sizes.bet}, BetResult ${sizes.result}, database ${sizes.db}`,
    );
    log(`  whale ${whale} holds ${fmt.int(whaleBets)} bets (${fmt.int(Math.floor(whaleBets / PAGE_SIZE))} full pages of ${PAGE_SIZE})`);
    const deepOffset = (DEEP_PAGE - 1) * PAGE_SIZE;
    if (whaleBets < deepOffset + PAGE_SIZE)
      throw new Error(`the whale holds ${whaleBets} bets: page ${DEEP_PAGE} of ${PAGE_SIZE} needs ${deepOffset + PAGE_SIZE}; raise --bets or --whale-share`);

    const betIds = (
      await sql.query<{ betId: string }>(
        `SELECT "betId"::text AS "betId" FROM "Bet" WHERE "chainId" = $1 AND "status" = 'SETTLED' ORDER BY "betId" LIMIT 100`,
        [CHAIN_ID],
      )
    ).rows.map((r) => r.betId);
    if (betIds.length < 100) throw new Error(`only ${betIds.length} settled bets on chain ${CHAIN_ID}: raise --bets`);

    // 2. The stack in a child process -----------------------------------------------------------
    served = await serve(benchUrl);
    const historyUrl = served.subgraphs.history;
    const resultsUrl = served.subgraphs.results;
    if (!historyUrl || !resultsUrl) throw new Error(`the child reported no history/results subgraph: ${JSON.stringify(served.subgraphs)}`);
    log();
    log(`stack served by child pid ${served.child.pid}: gateway ${served.gateway}, results ${resultsUrl}, history ${historyUrl}`);
    const serverPid = served.child.pid;
    cpuGroups = { server: () => (serverPid === undefined ? [] : [serverPid]), pg: backendPids(sql, DB_NAME, "bench-graphql") };

    // The deep cursor: walk the pages with a light query, straight against history.
    const walkStarted = performance.now();
    let cursor: string | null = null;
    const walkTimes: number[] = [];
    for (let page = 1; page < DEEP_PAGE; page++) {
      const t = performance.now();
      const { json }: { json: GraphQLBody } = await post(historyUrl, requestBody(PAGE_WALK, { wallet: whale, first: PAGE_SIZE, after: cursor }));
      walkTimes.push(performance.now() - t);
      const pageInfo = (json.data?.playerBets as { pageInfo?: { endCursor: string | null } } | undefined)?.pageInfo;
      if (json.errors?.length || !pageInfo?.endCursor) throw new Error(`page walk failed at page ${page}: ${JSON.stringify(json).slice(0, 300)}`);
      cursor = pageInfo.endCursor;
    }
    const deepCursor = cursor!;
    const firstHundred = median(walkTimes.slice(0, Math.min(100, walkTimes.length)));
    const lastHundred = median(walkTimes.slice(-100));
    const span = Math.min(100, walkTimes.length);
    log(
      `walked ${DEEP_PAGE - 1} pages (pageInfo only, history direct, sequential) in ${fmt.s(performance.now() - walkStarted)}: ` +
        `median ${fmt.ms(firstHundred)} ms per page over pages 1–${span}, ${fmt.ms(lastHundred)} ms over pages ${DEEP_PAGE - span}–${DEEP_PAGE - 1}`,
    );

    // The deep page must be the right rows: its first bet is the (deepOffset+1)-th newest.
    const expected = (
      await sql.query<{ key: string }>(
        `SELECT "chainId"::text || ':' || "betId"::text AS key FROM "Bet" WHERE "player" = $1
       ORDER BY "placedBlock" DESC, "placedLogIndex" DESC, "chainId" DESC OFFSET $2 LIMIT 1`,
        [whale, deepOffset],
      )
    ).rows[0]!.key;

    // 3. Scenarios ------------------------------------------------------------------------------
    const betResultsBody = requestBody(BET_RESULTS, { chainId: CHAIN_ID, betIds });
    const checkBetResults = (json: GraphQLBody): string | null => {
      const list = json.data?.betResults as { betId: string; result: { proof: { piA: string[] } } | null }[] | undefined;
      if (list?.length !== 100) return `expected 100 bets, got ${list?.length ?? "none"}`;
      if (list.some((b) => !b?.result?.proof?.piA?.length)) return "a settled bet came back without its proof";
      return null;
    };
    const pageCheck =
      (wantFirst: string | null) =>
      (json: GraphQLBody): string | null => {
        const nodes = (json.data?.playerBets as { nodes?: { chainId: number; betId: string }[] } | undefined)?.nodes;
        if (!nodes || nodes.length !== PAGE_SIZE) return `expected ${PAGE_SIZE} nodes, got ${nodes?.length ?? "none"}`;
        if (wantFirst && `${nodes[0]!.chainId}:${nodes[0]!.betId}` !== wantFirst)
          return `deep page starts at ${nodes[0]!.chainId}:${nodes[0]!.betId}, expected ${wantFirst}`;
        return null;
      };
    const page1Vars = { wallet: whale, first: PAGE_SIZE, after: null };
    const deepVars = { wallet: whale, first: PAGE_SIZE, after: deepCursor };

    const resultsOnPage = async (vars: Record<string, unknown>) => {
      const { json } = await post(served!.gateway, requestBody(PLAYER_BETS_GATEWAY, vars));
      const nodes = (json.data?.playerBets as { nodes?: { result: unknown }[] } | undefined)?.nodes ?? [];
      return { withResult: nodes.filter((n) => n.result !== null).length, bytes: JSON.stringify(json).length };
    };
    const p1Shape = await resultsOnPage(page1Vars);
    const deepShape = await resultsOnPage(deepVars);

    const S = {
      aGateway: { id: "a", label: "a betResults ×100, with proofs", endpoint: "gateway", url: served.gateway, body: betResultsBody, check: checkBetResults },
      aDirect: { id: "a", label: "a betResults ×100, with proofs", endpoint: "results", url: resultsUrl, body: betResultsBody, check: checkBetResults },
      bGateway: {
        id: "b",
        label: "b playerBets whale first 50 (+ result)",
        endpoint: "gateway",
        url: served.gateway,
        body: requestBody(PLAYER_BETS_GATEWAY, page1Vars),
        check: pageCheck(null),
      },
      bDirect: {
        id: "b",
        label: "b playerBets whale first 50 (history fields only)",
        endpoint: "history",
        url: historyUrl,
        body: requestBody(PLAYER_BETS_HISTORY, page1Vars),
        check: pageCheck(null),
      },
      cGateway1: {
        id: "c p1",
        label: "c page 1 (+ result)",
        endpoint: "gateway",
        url: served.gateway,
        body: requestBody(PLAYER_BETS_GATEWAY, page1Vars),
        check: pageCheck(null),
        note: `${p1Shape.withResult}/${PAGE_SIZE} with a result, ${fmt.int(p1Shape.bytes)} B`,
      },
      cGatewayDeep: {
        id: `c p${DEEP_PAGE}`,
        label: `c page ${DEEP_PAGE} (+ result)`,
        endpoint: "gateway",
        url: served.gateway,
        body: requestBody(PLAYER_BETS_GATEWAY, deepVars),
        check: pageCheck(expected),
        note: `${deepShape.withResult}/${PAGE_SIZE} with a result, ${fmt.int(deepShape.bytes)} B, starts at ${expected} as SQL OFFSET ${deepOffset} says`,
      },
      cDirect1: {
        id: "c p1",
        label: "c page 1 (history fields only)",
        endpoint: "history",
        url: historyUrl,
        body: requestBody(PLAYER_BETS_HISTORY, page1Vars),
        check: pageCheck(null),
      },
      cDirectDeep: {
        id: `c p${DEEP_PAGE}`,
        label: `c page ${DEEP_PAGE} (history fields only)`,
        endpoint: "history",
        url: historyUrl,
        body: requestBody(PLAYER_BETS_HISTORY, deepVars),
        check: pageCheck(expected),
      },
    } satisfies Record<string, Scenario>;
    for (const [key, scenario] of Object.entries(S)) (scenario as Scenario).key = key;
    const pairs: [string, string, Scenario, Scenario][] = (
      [
        ["a", "a: betResults, gateway vs results subgraph", S.aGateway, S.aDirect],
        ["b", "b: playerBets page 1, gateway vs history subgraph", S.bGateway, S.bDirect],
        ["c", `c: page 1 vs page ${DEEP_PAGE}, through the gateway`, S.cGateway1, S.cGatewayDeep],
        ["c", `c: page 1 vs page ${DEEP_PAGE}, history subgraph direct`, S.cDirect1, S.cDirectDeep],
      ] satisfies [string, string, Scenario, Scenario][]
    ).filter(([group]) => ONLY.has(group));
    const all: Scenario[] = pairs.flatMap(([, , a, b]) => [a, b]);

    log();
    log("pre-checks (one response body per scenario):");
    for (const scenario of all) await precheck(scenario);

    const loadStarted = performance.now();
    for (const [, title, a, b] of pairs) {
      log();
      log(title);
      await runPair(a, b);
    }
    const loadMs = performance.now() - loadStarted;

    // Where the time goes, unloaded: one request at a time.
    log();
    log(`unloaded latency, one request at a time (median of ${PROBES}):`);
    type NodeRefs = { nodes: { chainId: number; betId: string }[] } | undefined;
    const page1Nodes = ((await post(historyUrl, requestBody(PLAYER_BETS_HISTORY, page1Vars))).json.data?.playerBets as NodeRefs)?.nodes ?? [];
    const deepNodes = ((await post(historyUrl, requestBody(PLAYER_BETS_HISTORY, deepVars))).json.data?.playerBets as NodeRefs)?.nodes ?? [];
    const entitiesBody = (nodes: { chainId: number; betId: string }[]) =>
      requestBody(RESULTS_ENTITIES, { representations: nodes.map((n) => ({ __typename: "Bet", chainId: n.chainId, betId: n.betId })) });
    const probes: [string, string, string][] = [
      ["betResults ×100", "gateway", betResultsBody],
      ["betResults ×100", "results", betResultsBody],
      ["playerBets page 1 (+ result)", "gateway", requestBody(PLAYER_BETS_GATEWAY, page1Vars)],
      ["playerBets page 1, history fields", "history", requestBody(PLAYER_BETS_HISTORY, page1Vars)],
      ["_entities ×50 of page 1 → result", "results", entitiesBody(page1Nodes)],
      [`playerBets page ${DEEP_PAGE} (+ result)`, "gateway", requestBody(PLAYER_BETS_GATEWAY, deepVars)],
      [`playerBets page ${DEEP_PAGE}, history fields`, "history", requestBody(PLAYER_BETS_HISTORY, deepVars)],
      [`_entities ×50 of page ${DEEP_PAGE} → result`, "results", entitiesBody(deepNodes)],
    ];
    const urlOf: Record<string, string> = { gateway: served.gateway, results: resultsUrl, history: historyUrl };
    const probeRows: string[][] = [];
    for (const [label, endpoint, body] of probes) probeRows.push([label, endpoint, fmt.ms(await sequentialMs(urlOf[endpoint]!, body, PROBES))]);
    log(table(["request", "endpoint", "ms"], probeRows, [false, false, true]));

    // 4. EXPLAIN of the deep page -----------------------------------------------------------------
    log();
    const capturedDeep = await capturePlayerBetsSql(benchUrl, whale, deepCursor);
    const capturedFirst = await capturePlayerBetsSql(benchUrl, whale, null);
    const deepQuery = capturedDeep ?? mirrorSql(whale, decodeCursorKey(deepCursor));
    log(
      `EXPLAIN (ANALYZE, BUFFERS) of page ${DEEP_PAGE} of playerBets — ${capturedDeep ? "the SQL Prisma sends (captured from the history resolver)" : "hand-written mirror of Prisma's SQL"}:`,
    );
    log(deepQuery.sql.replace(/\s+/g, " ").replace(/ (FROM|WHERE|ORDER BY|LIMIT) /g, "\n  $1 "));
    log(`  params: ${JSON.stringify(deepQuery.params)}`);
    const explain = async (q: CapturedQuery) =>
      (await sql.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.params)).rows.map((r) => r["QUERY PLAN"]);
    const deepPlan = await explain(deepQuery);
    for (const line of deepPlan) log(`  ${line}`);
    if (capturedFirst) {
      const firstPlan = await explain(capturedFirst);
      log(
        `page 1 for comparison: ${firstPlan
          .filter((l) => /Index|Buffers|Execution Time/.test(l))
          .map((l) => l.trim())
          .slice(0, 4)
          .join(" · ")}`,
      );
    }
    const planText = deepPlan.join("\n");
    const indexScan = /Index (Only )?Scan( Backward)? using "?Bet_player_placedBlock/.test(planText);
    const seqOrSort = /Seq Scan|Sort Method/.test(planText);
    log(
      `plan check: ${indexScan ? "index scan on (player, placedBlock, placedLogIndex, chainId)" : "NO index scan on the keyset index"}${seqOrSort ? ", with a Seq Scan or Sort" : ", no Seq Scan, no Sort"}`,
    );

    // 5. Profile, final table and verdicts --------------------------------------------------------
    if (PROFILE) {
      await stopChild(served.child);
      printProfile(PROFILE_DIR);
    }

    const sum = new Map(all.map((s) => [s, summary(s)]));
    const m = (s: Scenario) => sum.get(s)!;
    log();
    log(
      `RESULTS — ${fmt.int(totalBets)} bets, whale ${fmt.int(whaleBets)} bets, ${CONNECTIONS} connections, ${DURATION} s per run, median of ${RUNS} interleaved runs, loopback`,
    );
    log(
      table(
        ["scenario", "endpoint", "req/s", "p50 ms", "p99 ms", "errors"],
        all.map((s) => [s.label, s.endpoint, fmt.rps(m(s).rps), fmt.ms(m(s).p50), fmt.ms(m(s).p99), `${m(s).errors}${m(s).failing ? " FAIL" : ""}`]),
        [false, false, true, true, true, true],
      ),
    );
    log("(via history: the history subgraph cannot resolve `result`, so its query selects the history-owned fields only.)");
    log();
    log("CPU per request (median of runs) — server = the child process (gateway and subgraphs share it), pg = its PostgreSQL backends:");
    log(
      table(
        ["scenario", "endpoint", "req/s per run", "spread", "server CPU ms/req", "pg CPU ms/req"],
        all.map((s) => [s.label, s.endpoint, m(s).runs.map(fmt.rps).join(" / "), spread(m(s).runs), fmt.ms(m(s).serverCpuMs), fmt.ms(m(s).pgCpuMs)]),
        [false, false, true, true, true, true],
      ),
    );
    const noisy = all.filter((s) => spreadOf(m(s).runs) > 0.25);
    if (noisy.length > 0 || loadPeak > availableParallelism()) {
      log(
        `NOISE: ${noisy.length} scenario(s) with runs more than 25% apart; peak 1-min loadavg ${loadPeak.toFixed(1)} on ${availableParallelism()} CPUs` +
          " (other processes competed for the CPUs). Compare CPU ms/req, which load from outside moves much less than req/s and latency.",
      );
    }

    const ran = (...xs: Scenario[]) => xs.every((x) => (results.get(x.key!)?.length ?? 0) > 0);
    const clean = (...xs: Scenario[]) => xs.every((x) => !m(x).failing);
    const within = (r: { p50: number; rps: number }) => r.p50 <= TARGET_DEEP_FACTOR && r.rps >= 1 / TARGET_DEEP_FACTOR;
    const deepRatio = (p1: Scenario, deep: Scenario) => ({ p50: m(deep).p50 / m(p1).p50, rps: m(deep).rps / m(p1).rps });
    /** Server + PostgreSQL CPU per request: the noise-robust cost. */
    const cpu = (x: Scenario) => m(x).serverCpuMs + (Number.isFinite(m(x).pgCpuMs) ? m(x).pgCpuMs : 0);
    const verdict = (ok: boolean | undefined) => (ok === undefined ? "not run" : ok ? "PASS" : "FAIL");

    log();
    log("ratios:");
    let aOk: boolean | undefined;
    if (ran(S.aGateway, S.aDirect)) {
      const share = m(S.aGateway).rps / m(S.aDirect).rps;
      aOk = clean(S.aGateway, S.aDirect) && share >= TARGET_GATEWAY_SHARE;
      log(
        `  a  betResults req/s gateway/direct:           ${fmt.ratio(share)}   target ≥ ${TARGET_GATEWAY_SHARE}×  ${verdict(aOk)}` +
          `   (p50 gateway/direct ${fmt.ratio(m(S.aGateway).p50 / m(S.aDirect).p50)}; CPU per request gateway/direct ${fmt.ratio(cpu(S.aGateway) / cpu(S.aDirect))})`,
      );
    }
    if (ran(S.bGateway, S.bDirect)) {
      log(
        `  b  playerBets page 1 req/s gateway/history:   ${fmt.ratio(m(S.bGateway).rps / m(S.bDirect).rps)}   informational (the gateway also fetches each bet's result from results)`,
      );
    }
    let cGwOk: boolean | undefined;
    let cDirectOk: boolean | undefined;
    if (ran(S.cGateway1, S.cGatewayDeep)) {
      const r = deepRatio(S.cGateway1, S.cGatewayDeep);
      cGwOk = clean(S.cGateway1, S.cGatewayDeep) && within(r);
      log(
        `  c  page ${DEEP_PAGE}/page 1 via gateway:   p50 ${fmt.ratio(r.p50)}, req/s ${fmt.ratio(r.rps)}   ${verdict(cGwOk)}` +
          `   (CPU per request ${fmt.ratio(cpu(S.cGatewayDeep) / cpu(S.cGateway1))})` +
          `   (results on the page: ${deepShape.withResult} vs ${p1Shape.withResult} of ${PAGE_SIZE}; response ${fmt.int(deepShape.bytes)} B vs ${fmt.int(p1Shape.bytes)} B)`,
      );
    }
    if (ran(S.cDirect1, S.cDirectDeep)) {
      const r = deepRatio(S.cDirect1, S.cDirectDeep);
      cDirectOk = clean(S.cDirect1, S.cDirectDeep) && within(r);
      log(
        `  c  page ${DEEP_PAGE}/page 1 via history:   p50 ${fmt.ratio(r.p50)}, req/s ${fmt.ratio(r.rps)}   ${verdict(cDirectOk)}` +
          `   (CPU per request ${fmt.ratio(cpu(S.cDirectDeep) / cpu(S.cDirect1))}; same selection and payload size: the pagination cost alone)`,
      );
    }
    if (cGwOk !== undefined || cDirectOk !== undefined)
      log(
        `     (deep page within ${TARGET_DEEP_FACTOR}× of page 1 means p50 ≤ ${TARGET_DEEP_FACTOR}× and req/s ≥ ${fmt.ratio(1 / TARGET_DEEP_FACTOR)}; the plan check above must show the keyset index scan)`,
      );
    const cOk = cGwOk === undefined && cDirectOk === undefined ? undefined : (cGwOk ?? true) && (cDirectOk ?? true) && indexScan && !seqOrSort;
    log();
    log(`target "gateway ≥ ${TARGET_GATEWAY_SHARE}× direct" (betResults):     ${verdict(aOk)}`);
    log(
      `target "deep page within ${TARGET_DEEP_FACTOR}× of page 1":        ${verdict(cOk)}${cOk === false && cDirectOk && indexScan && !seqOrSort ? " (history direct passes; the gateway pair fails)" : ""}`,
    );
    log(
      `load phase ${fmt.s(loadMs)}, whole run ${fmt.s(performance.now() - started)}; loadavg now ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
    return aOk !== false && cOk !== false && all.every((s) => !m(s).failing);
  } finally {
    await sql.end().catch(() => undefined);
  }
}

await runBenchmark(main, cleanup);
