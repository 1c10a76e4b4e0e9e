// Peer gateway benchmark: the same supergraph and the same running subgraphs served by this
// gateway (createGateway; and the whole `npm start` stack in one process), by Hive Gateway (its JS
// query planner and its Rust one), the owning subgraph queried directly, this gateway's response
// cache hits, and two floors (bench/floor.ts, no GraphQL): the raw floor (`pg` alone, one statement
// per query; its bytes checked equal to the `data` member of the service's answer before any load)
// and the floor through the subgraphs' data functions (the gateway's exact bytes, checked too).
// Every server is measured closed loop (req/s at a fixed number of connections) and open loop
// (p50/p99 at a fixed, moderate rate: --rate req/s).
//
//   npm run bench:gateways                       # ~6 min with a fresh database; writes BENCHMARKS.md
//   npx tsx bench/gateways.ts --reuse --duration 5 --runs 1 --print-only
//   npx tsx bench/gateways.ts --check-only --bets 5000   # servers and checks, no load (needs no bench lock)
//
// Every server runs in its own child process (bench/serve-peer.ts); the load comes from this
// process (autocannon). See BENCHMARKS.md for the conditions and how to read the table.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual, parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../core/db.ts";
import { databaseUrl, dropPostgresDatabase, recreatePostgresDatabase, withAdmin } from "../test/db.ts";
import { typescriptFlagsOf, type Spawned } from "../test/spawn.ts";
import { BET_RESULTS, benchConfig, fmt, log, median, PLAYER_BETS, post, requestBody, safeUrl, stopChild, table, type GraphQLBody } from "./common.ts";
import { barPlot } from "./plot.ts";
import {
  backendPids,
  checkResponse,
  errorCount,
  printProfile,
  runBenchmark,
  runLoad,
  runOpenLoop,
  settle,
  spawnServer,
  spreadOf,
  type RunStats,
} from "./load.ts";

const OPTIONS = {
  bets: { type: "string", default: "20000" },
  duration: { type: "string", default: "8" },
  warmup: { type: "string", default: "2" },
  runs: { type: "string", default: "2" },
  connections: { type: "string", default: "10" },
  variants: { type: "string", default: "64" },
  only: { type: "string", default: "betResults,playerBets" },
  endpoints: { type: "string", default: "floor-raw,floor,stack,apollo,direct,hive,hive-rust,apollo-cache" },
  rate: { type: "string", default: "100" },
  "open-seconds": { type: "string", default: "10" },
  database: { type: "string", default: "bench_gateways" },
  profile: { type: "string" },
  baseline: { type: "string" },
  keep: { type: "boolean", default: false },
  reuse: { type: "boolean", default: false },
  "print-only": { type: "boolean", default: false },
  "check-only": { type: "boolean", default: false },
  "loop-stats": { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies Record<string, { type: "string" | "boolean"; short?: string; default?: string | boolean }>;
const { values: args } = parseArgs({ options: OPTIONS });
if (args.help) {
  const usage = Object.entries(OPTIONS as Record<string, { type: string; short?: string; default?: string | boolean }>).map(
    ([name, o]) => `  ${o.short ? `-${o.short}, ` : ""}--${name}${o.type === "string" ? ` <value>  (default ${o.default ?? "unset"})` : ""}`,
  );
  process.stdout.write(`usage: npx tsx bench/gateways.ts [options]   (each option explained in bench/README.md)\n${usage.join("\n")}\n`);
  process.exit(0);
}

function int(name: keyof typeof args, min: number): number {
  const raw = args[name];
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${String(raw)}`);
  return value;
}
const list = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

const BETS = int("bets", 1000);
// 0: no closed loop (the open loop alone, warmed up at its own rate).
const DURATION = int("duration", 0);
const WARMUP = int("warmup", 0);
const RUNS = int("runs", 1);
const CONNECTIONS = int("connections", 1);
const VARIANTS = int("variants", 1);
const RATE = int("rate", 1);
const OPEN_SECONDS = int("open-seconds", 0);
const ONLY = list(args.only);
const ENDPOINTS = list(args.endpoints);
const PROFILE = args.profile;
const LOOP_STATS = args["loop-stats"];
const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
// Another name lets two benchmarks of the same kind share one PostgreSQL server.
const DB_NAME = args.database ?? "bench_gateways";
const APP = "bench-gateways";
const CHAIN_ID = 31337;
const WALLETS = 64;
const PROFILE_DIR = fileURLToPath(new URL("./.cache/profiles/", import.meta.url));
const REPORT = fileURLToPath(new URL("../BENCHMARKS.md", import.meta.url));
const PLOT = fileURLToPath(new URL("../docs/bench-gateways.svg", import.meta.url));
const MARK = { start: "<!-- bench:floor:start -->", end: "<!-- bench:floor:end -->" };
/**
 * Targets, req/s ÷ the raw floor's (issue 24): npm start ≥ 0.75× on betResults and ≥ 0.5× on the
 * wallet page, the separate processes ("this gateway" over the subgraphs child) ≥ 0.6× / 0.35×;
 * cache hits ≥ 5× the floor through the data functions (issue 12's floor); ours ≥ 1.3× Hive's Rust planner and ≥ 1× its JS planner, in req/s
 * and in gateway CPU per request; p99 at the open-loop rate ≤ 2× the raw floor's.
 */
const TARGET = {
  "floor-raw": { stack: { betResults: 0.75, playerBets: 0.5 }, apollo: { betResults: 0.6, playerBets: 0.35 } },
  floor: { "apollo-cache": { betResults: 5 } },
  vsHive: { hive: 1.0, "hive-rust": 1.3, "hive-nomerge": 1.0 },
  openP99: 2,
} as const;

const GATEWAYS = {
  stack: { label: "npm start (gateway + subgraphs, one process)", role: "stack", env: {} },
  apollo: { label: "this gateway", role: "apollo", env: {} },
  "apollo-cache": { label: "this gateway, response cache hits", role: "apollo", env: { BENCH_RESPONSE_CACHE: "1" } },
  hive: { label: "Hive Gateway, JS planner", role: "hive", env: { BENCH_HIVE_DEDUPE: "1" } },
  "hive-rust": { label: "Hive Gateway, Rust planner", role: "hive-rust", env: { BENCH_HIVE_DEDUPE: "1" } },
  "hive-nomerge": { label: "Hive Gateway, JS planner, merging off", role: "hive", env: { BENCH_HIVE_DEDUPE: "0" } },
} as const;
type GatewayKey = keyof typeof GATEWAYS;
const isGateway = (key: string): key is GatewayKey => key in GATEWAYS;
// A/B against another checkout (--baseline DIR, a directory with the same layout and node_modules):
// `stack@base`, `apollo@base`, `direct@base` run that checkout's servers (its own subgraphs child
// for the ones over subgraphs), interleaved with this checkout's in the same runs.
const BASELINE = args.baseline;
const BASE = "@base";
const isBase = (endpoint: string) => endpoint.endsWith(BASE);
const roleOf = (endpoint: string) => (isBase(endpoint) ? endpoint.slice(0, -BASE.length) : endpoint);
const isGatewayEndpoint = (endpoint: string) => isGateway(roleOf(endpoint));
const FLOORS = { "floor-raw": "raw", floor: "data" } as const;
const isFloor = (key: string): key is keyof typeof FLOORS => key in FLOORS;
for (const e of ENDPOINTS) {
  if (roleOf(e) !== "direct" && !isFloor(e) && !isGatewayEndpoint(e)) throw new Error(`--endpoints: unknown ${e}`);
  if (isBase(e) && !BASELINE) throw new Error(`--endpoints: ${e} needs --baseline DIR`);
}
/** Endpoints that only make sense for some queries: the floors know two operations; cache hits are measured on betResults. */
const ENDPOINT_QUERIES: Record<string, string[]> = {
  floor: ["betResults", "playerBets"],
  "floor-raw": ["betResults", "playerBets"],
  "apollo-cache": ["betResults"],
};
/** Gateways that run over the shared subgraphs child (the others own all their work). */
const OVER_SUBGRAPHS = new Set(["apollo", "apollo-cache", "hive", "hive-rust", "hive-nomerge", "direct"]);

// ---------------------------------------------------------------------------------------------
// Queries: what a gateway is asked, and what the owning subgraph is asked for the floor
// ---------------------------------------------------------------------------------------------

/** The floor: the same page with only what history owns (history cannot resolve `result` or a network's name). */
const PLAYER_BETS_HISTORY = `query BenchPlayerBets($wallet: Address!, $first: Int!) {
  playerBets(wallet: $wallet, first: $first) {
    totalCount
    nodes { chainId betId player stake game status placedBlock network { chainId } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const NETWORK_CONFIGS = `query BenchNetworkConfigs($chainId: ChainId) {
  networkConfigs(chainId: $chainId) { chainId name confirmations contracts { name address deployBlock } indexing { indexedBlock headBlock lagBlocks isReady } }
}`;

interface Query {
  key: string;
  label: string;
  /** The subgraph that owns the root field (the direct floor). */
  owner: "results" | "history" | "networks";
  gatewayBodies: string[];
  directBodies: string[];
  check: (json: GraphQLBody) => string | null;
}

function buildQueries(settled: string[], wallets: string[], chains: number[]): Query[] {
  // Different bet id sets and wallets per request: Hive merges identical in-flight requests.
  const idSets = Array.from({ length: VARIANTS }, (_, v) => {
    const start = (v * 97) % Math.max(1, settled.length - 100);
    return settled.slice(start, start + 100);
  });
  const betBodies = idSets.map((betIds) => requestBody(BET_RESULTS, { chainId: CHAIN_ID, betIds }));
  const walletsUsed = Array.from({ length: VARIANTS }, (_, v) => wallets[v % wallets.length]!);
  const chainVariants: (number | null)[] = [null, ...chains];
  const netBodies = chainVariants.map((chainId) => requestBody(NETWORK_CONFIGS, { chainId }));
  const all: Query[] = [
    {
      key: "betResults",
      label: "betResults ×100 with result + proof",
      owner: "results",
      gatewayBodies: betBodies,
      directBodies: betBodies,
      check: (json) => {
        const bets = json.data?.betResults as { result: { proof: { piA: string[] } } | null }[] | undefined;
        if (bets?.length !== 100) return `expected 100 bets, got ${bets?.length ?? "none"}`;
        return bets.every((b) => b.result?.proof?.piA?.length) ? null : "a settled bet came back without its proof";
      },
    },
    {
      key: "playerBets",
      label: "playerBets(first: 50) + result { proof } + network",
      owner: "history",
      gatewayBodies: walletsUsed.map((wallet) => requestBody(PLAYER_BETS, { wallet, first: 50 })),
      directBodies: walletsUsed.map((wallet) => requestBody(PLAYER_BETS_HISTORY, { wallet, first: 50 })),
      check: (json) => {
        const nodes = (json.data?.playerBets as { nodes?: { network: { chainId: number } }[] } | undefined)?.nodes;
        if (nodes?.length !== 50) return `expected 50 bets, got ${nodes?.length ?? "none"}`;
        return nodes.every((n) => n.network?.chainId) ? null : "a bet came back without its network";
      },
    },
    {
      key: "networkConfigs",
      label: `networkConfigs (${chainVariants.length} variants: all, each chain)`,
      owner: "networks",
      gatewayBodies: netBodies,
      directBodies: netBodies,
      check: (json) => ((json.data?.networkConfigs as unknown[] | undefined)?.length ? null : "no networks"),
    },
  ];
  for (const key of ONLY) if (!all.some((q) => q.key === key)) throw new Error(`--only: unknown query ${key}`);
  return all.filter((q) => ONLY.includes(q.key));
}

// ---------------------------------------------------------------------------------------------
// Database and servers
// ---------------------------------------------------------------------------------------------

async function prepareDatabase(url: string): Promise<void> {
  const exists = await withAdmin(async (c) => (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME])).rowCount === 1, SERVER_URL, APP);
  if (args.reuse && exists) {
    log(`reusing database ${DB_NAME} (--reuse; not reseeded)`);
    await (await openDatabase({ url, migrate: true })).close(); // newer migrations, if any
    return;
  }
  await recreatePostgresDatabase(DB_NAME, SERVER_URL);
  const started = performance.now();
  const db = await openDatabase({ url, migrate: true });
  // Imported here only: seeding pulls in the prover code, which a --reuse run never needs.
  const { seedFixtures } = await import("../fixtures/seed.ts");
  const { readProofCache } = await import("../fixtures/proof-cache.ts");
  // provenLimit 0: every settled bet carries a real proof from the committed cache (the same payload
  // as a proven one), stored as verified: false, so seeding never runs the prover.
  await seedFixtures(db, { bets: BETS, wallets: WALLETS, provenLimit: 0, outbox: false, proofCache: readProofCache() });
  await db.prisma.$executeRawUnsafe("ANALYZE");
  await db.close();
  log(`seeded ${fmt.int(BETS)} bets over ${WALLETS} wallets in ${fmt.s(performance.now() - started)}`);
}

/** Every server runs with the young generation production gives it (Dockerfile, npm scripts): ours, the peers and the floor alike. */
const SERVER_NODE_FLAGS = ["--max-semi-space-size=32"];
const children = new Map<string, Spawned>();
const script = fileURLToPath(new URL("./serve-peer.ts", import.meta.url));
const floorScript = fileURLToPath(new URL("./floor.ts", import.meta.url));

async function startServer(name: string, role: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const profiling = PROFILE === name ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR] : [];
  if (profiling.length) mkdirSync(PROFILE_DIR, { recursive: true });
  const from = (path: string) => (isBase(name) && BASELINE ? join(BASELINE, "bench", basename(path)) : path);
  const { child, info } = await spawnServer(from(isFloor(role) ? floorScript : script), {
    args: isFloor(role) ? [FLOORS[role]] : [role],
    env,
    nodeFlags: [...SERVER_NODE_FLAGS, ...profiling],
    // A baseline runs as that checkout's npm start runs it.
    typescriptFlags: isBase(name) && BASELINE ? typescriptFlagsOf(BASELINE) : undefined,
    ready: (line) => line.role === role,
    // Start-up reads every module (and compiles it under tsx); on a machine loaded by other work it has taken over a minute.
    timeoutMs: 240_000,
  });
  children.set(name, child);
  return info;
}

/**
 * --loop-stats: asks this checkout's children behind `endpoint` (the server, and the subgraphs
 * child under a gateway) for their event-loop delay and GC pauses since the last ask
 * (bench/loop-stats.ts); the first ask starts the measuring. A baseline's children are not asked:
 * an older checkout may not handle the signal, and SIGUSR2 unhandled ends a process.
 */
const loopAsks = new Map<string, number>();
async function loopStats(endpoint: string): Promise<Record<string, unknown>[]> {
  if (!LOOP_STATS || isBase(endpoint)) return [];
  const names = [endpoint, ...(OVER_SUBGRAPHS.has(roleOf(endpoint)) ? ["subgraphs"] : [])];
  return Promise.all(
    names.map(async (name) => {
      const child = children.get(name);
      if (!child) return {};
      const seq = (loopAsks.get(name) ?? 0) + 1;
      loopAsks.set(name, seq);
      process.kill(child.pid, "SIGUSR2");
      return child.waitForJson((line) => line.loopStats !== undefined && line.seq === seq, 10_000, "the loop stats");
    }),
  );
}

/** Null when `floor` is `{"data":D}\n` and `service` is `{"data":D` followed by `}\n` or `,"extensions":…`; else where they part. */
function dataBytesDiffer(service: string, floor: string): string | null {
  const prefix = '{"data":';
  const data = floor.startsWith(prefix) && floor.endsWith("}\n") ? floor.slice(prefix.length, -2) : null;
  const rest = data !== null && service.startsWith(prefix + data) ? service.slice(prefix.length + data.length) : null;
  if (rest === "}\n" || rest?.startsWith(',"extensions":')) return null;
  const at = [...service].findIndex((c, i) => c !== floor[i]);
  return `at ${at}: …${service.slice(at - 40, at + 40)}… vs …${floor.slice(at - 40, at + 40)}…`;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

interface Cell {
  query: Query;
  endpoint: string;
  url: string;
  bodies: string[];
  runs: RunStats[];
  /** Open-loop runs at --rate req/s. */
  open: RunStats[];
  problem: string | null;
}

async function main(): Promise<boolean> {
  const started = performance.now();
  const url = databaseUrl(DB_NAME, SERVER_URL);
  log("Peer gateway benchmark — this gateway vs Hive Gateway vs the owning subgraph");
  log(
    `  database  ${safeUrl(url)}; load: autocannon ${CONNECTIONS} connections, ${DURATION} s runs after ${WARMUP} s warm-up, ${RUNS} interleaved runs, median`,
  );
  log(
    `  host      ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "?"}); loadavg at start ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  await prepareDatabase(url);

  const sql = new pg.Client({ connectionString: url, application_name: APP });
  await sql.connect();
  try {
    const settled = (
      await sql.query<{ id: string }>(`SELECT "betId"::text AS id FROM "Bet" WHERE "chainId" = $1 AND status = 'SETTLED' ORDER BY "betId"`, [CHAIN_ID])
    ).rows.map((r) => r.id);
    const wallets = (
      await sql.query<{ player: string }>(`SELECT player FROM "Bet" GROUP BY player HAVING count(*) >= 50 ORDER BY count(*) DESC, player`)
    ).rows.map((r) => r.player);
    const chains = (await sql.query<{ id: number }>(`SELECT "chainId"::int AS id FROM "Network" ORDER BY 1`)).rows.map((r) => r.id);
    if (settled.length < 100 || wallets.length === 0) throw new Error("the bench database holds too few settled bets or wallets: raise --bets");
    const queries = buildQueries(settled, wallets, chains);

    const subgraphs = (await startServer("subgraphs", "subgraphs", { BENCH_SERVE_DATABASE_URL: url })).subgraphs as Record<string, string>;
    const baseSubgraphs = ENDPOINTS.some((e) => isBase(e) && OVER_SUBGRAPHS.has(roleOf(e)))
      ? ((await startServer(`subgraphs${BASE}`, "subgraphs", { BENCH_SERVE_DATABASE_URL: url })).subgraphs as Record<string, string>)
      : {};
    const subgraphsOf = (endpoint: string) => (isBase(endpoint) ? baseSubgraphs : subgraphs);
    const urls: Record<string, string> = {};
    for (const endpoint of ENDPOINTS.filter(isGatewayEndpoint)) {
      const g = GATEWAYS[roleOf(endpoint) as GatewayKey];
      const env = { BENCH_SERVE_DATABASE_URL: url, BENCH_SUBGRAPH_URLS: JSON.stringify(subgraphsOf(endpoint)), ...g.env };
      urls[endpoint] = (await startServer(endpoint, g.role, env)).url as string;
    }
    for (const floor of ENDPOINTS.filter(isFloor)) urls[floor] = (await startServer(floor, floor, { BENCH_SERVE_DATABASE_URL: url })).url as string;
    log(`servers: ${[...children].map(([name, child]) => `${name} pid ${child.pid}`).join(", ")}`);

    const cells: Cell[] = [];
    for (const query of queries) {
      for (const endpoint of ENDPOINTS) {
        const only = ENDPOINT_QUERIES[roleOf(endpoint)];
        if (only && !only.includes(query.key)) continue;
        const direct = roleOf(endpoint) === "direct";
        cells.push({
          query,
          endpoint,
          url: direct ? subgraphsOf(endpoint)[query.owner]! : urls[endpoint]!,
          bodies: direct ? query.directBodies : query.gatewayBodies,
          runs: [],
          open: [],
          problem: null,
        });
      }
    }

    // Checks: every body answers 200 without errors; both gateways return the same data.
    log();
    log("checks:");
    for (const cell of cells) {
      for (const body of cell.bodies) {
        cell.problem = await checkResponse(cell.url, body, cell.query.check);
        if (cell.problem) break;
      }
      log(
        `  ${cell.query.key.padEnd(15)} ${cell.endpoint.padEnd(13)} ${cell.problem ? `FAIL: ${cell.problem}` : `ok (${cell.bodies.length} distinct bodies)`}`,
      );
    }
    for (const query of queries) {
      const gateways = ENDPOINTS.filter(isGatewayEndpoint);
      for (const body of query.gatewayBodies.slice(0, 8)) {
        const answers = await Promise.all(gateways.map(async (g) => (await post(urls[g]!, body)).json.data));
        const differs = gateways.find((_, i) => !isDeepStrictEqual(answers[i], answers[0]));
        if (differs) throw new Error(`${query.key}: ${differs} and ${gateways[0]} answer the same request differently`);
      }
    }
    log(`  every gateway returned the same data for the first 8 bodies of each query`);
    // Each floor must write the bytes of the `data` member of the service's answer, for every body
    // the load sends (what the service adds in `extensions` is part of its cost): the service's
    // answer is `{"data":` + those bytes, then its end or its extensions.
    const reference = urls.stack ?? urls.apollo;
    for (const floor of reference ? ENDPOINTS.filter(isFloor) : []) {
      for (const query of queries.filter((q) => ENDPOINT_QUERIES[floor]!.includes(q.key))) {
        for (const body of query.gatewayBodies) {
          const [ours, theirs] = await Promise.all([post(reference!, body), post(urls[floor]!, body)]);
          const problem = dataBytesDiffer(ours.text, theirs.text);
          if (problem) throw new Error(`${query.key}: ${floor}'s data differs from the service's ${problem}`);
        }
        log(`  ${query.key}: ${floor} wrote the bytes of the service's data member for all ${query.gatewayBodies.length} bodies`);
      }
    }
    if (args["check-only"]) return cells.every((c) => !c.problem);

    // Load: per query, endpoints interleaved (A B C D, A B C D, …).
    const cpuOf = (endpoint: string) => {
      const gateway = children.get(endpoint)?.pid;
      const sub = OVER_SUBGRAPHS.has(roleOf(endpoint)) ? children.get(isBase(endpoint) ? `subgraphs${BASE}` : "subgraphs")?.pid : undefined;
      return {
        gateway: () => (gateway === undefined ? [] : [gateway]),
        subgraphs: () => (sub === undefined ? [] : [sub]),
        pg: backendPids(sql, DB_NAME, APP),
      };
    };
    // Before every run, every server (and PostgreSQL) idle again: see settle().
    const everyServer = { servers: () => [...children.values()].map((c) => c.pid), pg: backendPids(sql, DB_NAME, APP) };
    const settleBeforeRun = async () => {
      const { waitedMs, settled } = await settle(everyServer);
      if (!settled) log(`  (servers still busy after ${(waitedMs / 1000).toFixed(0)} s: the next run starts anyway)`);
    };
    let loadPeak = 0;
    // Connections opened to the database during a run (each a new backend whose statements are prepared afresh).
    const sessions = async () =>
      Number((await sql.query<{ n: string }>(`SELECT sessions::text AS n FROM pg_stat_database WHERE datname = $1`, [DB_NAME])).rows[0]?.n ?? Number.NaN);
    for (const query of DURATION > 0 ? queries : []) {
      log();
      log(query.label);
      for (let run = 1; run <= RUNS; run++) {
        for (const cell of cells.filter((c) => c.query === query && !c.problem)) {
          const options = { url: cell.url, bodies: cell.bodies, connections: CONNECTIONS, cpu: cpuOf(cell.endpoint) };
          await settleBeforeRun();
          if (WARMUP > 0) await runLoad({ ...options, seconds: WARMUP });
          const stats = await runLoad({ ...options, seconds: DURATION });
          cell.runs.push(stats);
          loadPeak = Math.max(loadPeak, stats.load1);
          log(
            `  run ${run}/${RUNS} ${cell.endpoint.padEnd(13)} ${fmt.rps(stats.rps).padStart(7)} req/s  p50 ${fmt.ms(stats.p50).padStart(6)} ms  p99 ${fmt.ms(stats.p99).padStart(7)} ms` +
              `  cpu/req gateway ${fmt.ms(stats.cpuMs.gateway!)} subgraphs ${fmt.ms(stats.cpuMs.subgraphs!)} pg ${fmt.ms(stats.cpuMs.pg!)} ms` +
              `  errors ${errorCount(stats)}  loadavg ${stats.load1.toFixed(1)}`,
          );
        }
      }
    }

    // Open loop: the same servers at a fixed, moderate rate, interleaved the same way.
    if (OPEN_SECONDS > 0)
      for (const query of queries) {
        log();
        log(`${query.label}: open loop at ${RATE} req/s`);
        for (let run = 1; run <= RUNS; run++) {
          for (const cell of cells.filter((c) => c.query === query && !c.problem)) {
            const openOptions = { url: cell.url, bodies: cell.bodies, rate: RATE, cpu: cpuOf(cell.endpoint) };
            await settleBeforeRun();
            // Without a closed loop nothing has warmed the servers up: the first round does, at the same rate.
            if (DURATION === 0 && run === 1 && WARMUP > 0) await runOpenLoop({ ...openOptions, seconds: WARMUP });
            await loopStats(cell.endpoint);
            const sessionsBefore = await sessions();
            const stats = await runOpenLoop({ ...openOptions, seconds: OPEN_SECONDS });
            const newSessions = (await sessions()) - sessionsBefore;
            const loop = await loopStats(cell.endpoint);
            cell.open.push(stats);
            loadPeak = Math.max(loadPeak, stats.load1);
            log(
              `  run ${run}/${RUNS} ${cell.endpoint.padEnd(13)} ${fmt.rps(stats.rps).padStart(7)} req/s  p50 ${fmt.ms(stats.p50).padStart(6)} ms  p99 ${fmt.ms(stats.p99).padStart(7)} ms` +
                `  cpu/req gateway ${fmt.ms(stats.cpuMs.gateway!)} subgraphs ${fmt.ms(stats.cpuMs.subgraphs!)} pg ${fmt.ms(stats.cpuMs.pg!)} ms` +
                `  errors ${errorCount(stats)}  loadavg ${stats.load1.toFixed(1)}  bench CPU ${Math.round(stats.benchCpuShare * 100)}%  new pg sessions ${newSessions}`,
            );
            for (const line of loop) log(`      ${JSON.stringify(line)}`);
          }
        }
      }

    for (const [name, child] of children)
      if (PROFILE === name) {
        await stopChild(child);
        printProfile(PROFILE_DIR, `${name} CPU profile`);
      }

    const report = render(cells, queries, loadPeak);
    log();
    log(report.text);
    // An open-loop-only run (--duration 0) has no closed-loop rows: it never replaces the published table.
    if (!args["print-only"] && DURATION > 0) {
      writeReport(report.text);
      writeFileSync(PLOT, report.svg);
      log(`\nwrote the table to ${REPORT} and the plot to ${PLOT}`);
    }
    log(
      `whole run ${fmt.s(performance.now() - started)}; loadavg now ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
    return report.ok;
  } finally {
    await sql.end().catch(() => undefined);
  }
}

const LABEL: Record<string, string> = {
  "floor-raw": "raw floor (bench/floor-raw.ts: pg, one statement, the bytes)",
  floor: "floor through the data functions (bench/floor-data.ts)",
};
const labelOf = (cell: Cell) => {
  const role = roleOf(cell.endpoint);
  const label = role === "direct" ? `${cell.query.owner} subgraph directly` : (LABEL[role] ?? GATEWAYS[role as GatewayKey].label);
  return isBase(cell.endpoint) ? `${label} (baseline)` : label;
};

function render(cells: Cell[], queries: Query[], loadPeak: number): { text: string; ok: boolean; svg: string } {
  const m = (cell: Cell | undefined) => {
    const runs = cell?.runs ?? [];
    const open = cell?.open ?? [];
    const med = (of: RunStats[], f: (r: RunStats) => number) => (of.length ? median(of.map(f)) : Number.NaN);
    return {
      rps: med(runs, (r) => r.rps),
      p50: med(runs, (r) => r.p50),
      p99: med(runs, (r) => r.p99),
      openP50: med(open, (r) => r.p50),
      openP99: med(open, (r) => r.p99),
      gw: med(runs, (r) => r.cpuMs.gateway ?? Number.NaN),
      sub: med(runs, (r) => r.cpuMs.subgraphs ?? Number.NaN),
      pg: med(runs, (r) => r.cpuMs.pg ?? Number.NaN),
      errors: [...runs, ...open].reduce((s, r) => s + errorCount(r), 0),
      spread: spreadOf(runs.map((r) => r.rps)),
    };
  };
  const find = (q: Query, endpoint: string) => cells.find((c) => c.query === q && c.endpoint === endpoint);
  const rows: string[][] = [];
  for (const cell of cells) {
    const s = m(cell);
    const ratio = (endpoint: string) => (find(cell.query, endpoint) ? fmt.ratio(s.rps / m(find(cell.query, endpoint)).rps) : "—");
    // Hive's gateway CPU per request over this row's own process's: ≥ 1 means this row spends less (gateways: the 1.3× target).
    const hiveRust = find(cell.query, "hive-rust");
    rows.push([
      cell.query.key,
      labelOf(cell),
      fmt.rps(s.rps),
      fmt.ms(s.gw),
      ratio("floor-raw"),
      ratio("floor"),
      ratio("hive-rust"),
      hiveRust && OVER_SUBGRAPHS.has(roleOf(cell.endpoint)) ? fmt.ratio(m(hiveRust).gw / s.gw) : "—",
      fmt.ms(s.p50),
      fmt.ms(s.p99),
      fmt.ms(s.openP50),
      fmt.ms(s.openP99),
      fmt.ms(s.sub),
      fmt.ms(s.pg),
      `${Math.round(s.spread * 100)}%`,
      cell.problem ? "FAIL" : String(s.errors),
    ]);
  }
  const lines: string[] = [];
  const ok: boolean[] = [];
  lines.push(
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC · ${availableParallelism()} CPUs · closed loop: ${CONNECTIONS} connections, ${DURATION} s runs · open loop: ${RATE} req/s, ${OPEN_SECONDS} s runs · median of ${RUNS} interleaved runs · ${VARIANTS} distinct bodies per query`,
  );
  lines.push("");
  lines.push(
    table(
      [
        "query",
        "served by",
        "req/s",
        "own process CPU ms/req",
        "req/s ÷ raw floor",
        "req/s ÷ data floor",
        "req/s ÷ Hive Rust",
        "Hive Rust CPU/req ÷ own",
        "p50 ms",
        "p99 ms",
        `p50 ms at ${RATE}/s`,
        `p99 ms at ${RATE}/s`,
        "subgraphs CPU ms/req",
        "pg CPU ms/req",
        "spread",
        "errors",
      ],
      rows,
      [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
    ),
  );
  lines.push("");
  const verdict = (r: number, target: number, at = "≥") =>
    `${fmt.ratio(r)} (target ${at} ${target}×: ${(at === "≥" ? r >= target : r <= target) ? "PASS" : "FAIL"})`;
  for (const q of queries) {
    const raw = find(q, "floor-raw");
    for (const floorKey of ["floor-raw", "floor"] as const) {
      const floor = find(q, floorKey);
      if (floor)
        for (const [endpoint, targets] of Object.entries(TARGET[floorKey])) {
          const c = find(q, endpoint);
          const target = (targets as Record<string, number>)[q.key];
          if (!c || target === undefined) continue;
          const r = m(c).rps / m(floor).rps;
          ok.push(r >= target);
          lines.push(`- ${q.key}: ${labelOf(c)} ÷ ${floorKey === "floor" ? "data" : "raw"} floor req/s ${verdict(r, target)}`);
        }
    }
    const ours = find(q, "apollo");
    for (const [peer, target] of Object.entries(TARGET.vsHive)) {
      const p = find(q, peer);
      if (!p || !ours) continue;
      const r = m(ours).rps / m(p).rps;
      // CPU: the peer's gateway CPU per request over ours, so that ≥ 1 means ours spends less.
      const cpu = m(p).gw / m(ours).gw;
      ok.push(r >= target, cpu >= target);
      lines.push(
        `- ${q.key}: this gateway vs ${GATEWAYS[peer as GatewayKey].label}: req/s ours ÷ theirs ${verdict(r, target)}; gateway CPU/req theirs ÷ ours ${verdict(cpu, target)}`,
      );
    }
    if (raw && OPEN_SECONDS > 0)
      for (const endpoint of ["stack", "apollo"]) {
        const c = find(q, endpoint);
        if (!c) continue;
        // A server that could not keep up with the rate (requests failed or timed out) has no p99 at that rate to compare.
        const overrun = [c, raw].filter((cell) => cell.open.some((run) => errorCount(run) > 0)).map(labelOf);
        if (overrun.length > 0) {
          ok.push(false);
          lines.push(
            `- ${q.key}: ${labelOf(c)} p99 at ${RATE} req/s ÷ raw floor's: no verdict (FAIL): errors in the open-loop runs of ${overrun.join(" and ")}`,
          );
          continue;
        }
        const r = m(c).openP99 / m(raw).openP99;
        ok.push(r <= TARGET.openP99);
        lines.push(`- ${q.key}: ${labelOf(c)} p99 at ${RATE} req/s ÷ raw floor's ${verdict(r, TARGET.openP99, "≤")}`);
      }
  }
  const clean = cells.every((c) => !c.problem && [...c.runs, ...c.open].every((r) => errorCount(r) === 0));
  const noisy = cells.some((c) => m(c).spread > 0.25) || loadPeak > availableParallelism();
  if (noisy)
    lines.push(
      `- NOISE: runs more than 25% apart or 1-min loadavg up to ${loadPeak.toFixed(1)} on ${availableParallelism()} CPUs: compare CPU per request rather than req/s.`,
    );
  const measured = (q: Query) => cells.filter((c) => c.query === q && c.runs.length);
  const svg = barPlot(
    `Per server: req/s (${CONNECTIONS} connections) and p99 at ${RATE} req/s open loop (${availableParallelism()} CPUs, median of ${RUNS} interleaved runs)`,
    queries.flatMap((q) => [
      {
        title: `${q.label} — req/s, closed loop (more is better)`,
        bars: measured(q).map((c) => ({ label: labelOf(c), value: m(c).rps, highlight: isFloor(c.endpoint) })),
      },
      ...(OPEN_SECONDS > 0
        ? [
            {
              title: `${q.label} — p99 ms at ${RATE} req/s, open loop (less is better)`,
              bars: measured(q).map((c) => ({ label: labelOf(c), value: m(c).openP99, highlight: isFloor(c.endpoint) })),
            },
          ]
        : []),
    ]),
  );
  return { text: lines.join("\n"), ok: clean && ok.every(Boolean), svg };
}

/** Replaces the generated section of BENCHMARKS.md; the hand-written rest stays. */
function writeReport(text: string): void {
  let current = "";
  try {
    current = readFileSync(REPORT, "utf8");
  } catch {
    current = `# Benchmarks\n\n${MARK.start}\n${MARK.end}\n`;
  }
  const start = current.indexOf(MARK.start);
  const end = current.indexOf(MARK.end);
  const section = `${MARK.start}\n${text}\n${MARK.end}`;
  const next = start >= 0 && end > start ? current.slice(0, start) + section + current.slice(end + MARK.end.length) : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(REPORT, next);
}

async function cleanup(): Promise<void> {
  for (const [name, child] of children) await stopChild(child).catch((e: unknown) => log(`could not stop ${name}: ${String(e)}`));
  children.clear();
  if (!args.keep && !args.reuse) {
    await dropPostgresDatabase(DB_NAME, SERVER_URL).catch((e: unknown) => log(`could not drop ${DB_NAME}: ${String(e)}`));
  }
}

await runBenchmark(main, cleanup);
