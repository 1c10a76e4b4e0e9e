// This service vs Ponder (issue 24 item 3), interleaved in one run on the same local chain and
// PostgreSQL server:
//
//   1. Backfill: events/s over the same block range (bench/ponder-chain.ts), runs interleaved
//      (ours without proof checks, Ponder, ours verifying every genuine proof; --backfill-runs
//      times). "Ours, proofs not checked" is the like-for-like row: INDEXER_BENCH_SKIP_PROOF_VERIFICATION
//      through the one configuration parser (refused in production), every result stored
//      unverified, as Ponder, which checks no proof, stores them. The verified row stands beside it.
//   2. The wallet page: the proven player's newest 50 bets with their results, from ours (`npm
//      start`'s shape: gateway and subgraphs in one process, production settings, no rate limit, no
//      response cache; over the database the verifying run filled) and from Ponder's GraphQL API
//      (over the database its last run filled). Both answers are checked to carry the same bets,
//      statuses and results before any load; then req/s, p50/p99 and CPU per request (server process
//      and PostgreSQL backends), runs interleaved.
//
//   npx tsx bench/proof-cache.ts --bets 600      # once: the genuine proofs (~0.3 s each, cached in .data/)
//   npm run bench:ponder -- [--filler 4000] [--backfill-runs 2] [--duration 10] [--runs 2] [--connections 10]
//   npm run bench:ponder -- --baseline /tmp/base --modes unchecked@base,unchecked --backfill-runs 6   # A/B of our backfill only
//
// Needs PostgreSQL (BENCH_DATABASE_URL's server, databases bench_ponder_*, dropped at the end
// unless --keep) and npm (the fixture's first install). Everything listens on 127.0.0.1.
import { availableParallelism, loadavg } from "node:os";
import { writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { createLogger, silentLogger } from "../core/logger.ts";
import { networkFromDeployment } from "../indexer/config.ts";
import { createIndexer } from "../indexer/indexer.ts";
import { databaseUrl, dropPostgresDatabase, recreatePostgresDatabase } from "../test/db.ts";
import type { Spawned } from "../test/spawn.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { benchConfig, fmt, log, median, post, processCpuMs, requestBody, table } from "./common.ts";
import { backendPids, errorCount, runBenchmark, runLoad, spawnServer, type RunStats } from "./load.ts";
import { type BenchChain, buildBenchChain } from "./ponder-chain.ts";
import { ensurePonderInstalled, PONDER_SCHEMA, type RunningPonder, startPonder } from "./ponder-peer.ts";
import { barPlot } from "./plot.ts";
import { readProofCache } from "./proof-cache.ts";

const { values: args } = parseArgs({
  options: {
    proven: { type: "string", default: "600" },
    filler: { type: "string", default: "4000" },
    "backfill-runs": { type: "string", default: "2" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    runs: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    keep: { type: "boolean", default: false },
    /** Log level of our indexer (`debug`: one line per commit with its phases' milliseconds). */
    log: { type: "string", default: "silent" },
    /** Another checkout (same layout, its own node_modules) whose indexer runs the `…@base` modes. */
    baseline: { type: "string" },
    /** Backfill rows, in the order each run interleaves them; without `ponder`, no wallet page either. */
    modes: { type: "string", default: "unchecked,ponder,verified" },
  },
});
function int(name: keyof typeof args, min: number): number {
  const value = Number(args[name]);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${String(args[name])}`);
  return value;
}
const PROVEN = int("proven", 50);
const FILLER = int("filler", 0);
const BACKFILL_RUNS = int("backfill-runs", 1);
const DURATION = int("duration", 1);
const WARMUP = int("warmup", 0);
const RUNS = int("runs", 1);
const CONNECTIONS = int("connections", 1);
const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const APP = "bench-ponder";
const DB = {
  skip: "bench_ponder_ours_unchecked",
  verified: "bench_ponder_ours_verified",
  ponder: "bench_ponder_peer",
  base: "bench_ponder_ours_base",
} as const;
const MODES = ["unchecked", "ponder", "verified", "unchecked@base", "verified@base"] as const;
type Mode = (typeof MODES)[number];
const isMode = (m: string): m is Mode => (MODES as readonly string[]).includes(m);
const RUN_MODES = (args.modes ?? "").split(",").filter(Boolean);
for (const m of RUN_MODES) if (!isMode(m)) throw new Error(`--modes: unknown ${m} (${MODES.join(", ")})`);
const MODE_LIST = RUN_MODES.filter(isMode);
if (MODE_LIST.some((m) => m.endsWith("@base")) && !args.baseline) throw new Error("--modes: the @base modes need --baseline DIR");
const PLOT = fileURLToPath(new URL("../docs/bench-ponder.svg", import.meta.url));
const PAGE = 50;

/** The benchmark-only setting, read through the one parser (which refuses it under NODE_ENV=production). */
const skipProofs = loadConfig(["indexer"], { ...process.env, INDEXER_BENCH_SKIP_PROOF_VERIFICATION: "1" }).INDEXER_BENCH_SKIP_PROOF_VERIFICATION;

const OURS_PAGE = `query WalletPage($wallet: Address!) {
  playerBets(wallet: $wallet, first: ${PAGE}) {
    nodes { betId player stake game status placedBlock placedTx settledBlock refundedBlock result { outcome won payout proof { piA piB piC } } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const PONDER_PAGE = `query WalletPage($player: String!) {
  bets(where: { player: $player }, orderBy: "betId", orderDirection: "desc", limit: ${PAGE}) {
    items { betId player stake game status placedBlock placedTx settledBlock refundedBlock result { outcome won payout proof } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface PageBet {
  betId: string;
  status: string;
  placedBlock: string;
  result: { outcome: string; won: boolean; payout: string } | null;
}
/** What both answers must agree on, bet by bet, in order. */
const essence = (bets: PageBet[]) =>
  bets.map((b) => [String(b.betId), b.status, String(b.placedBlock), b.result ? [String(b.result.outcome), b.result.won, String(b.result.payout)] : null]);

let chain: BenchChain | undefined;
let ponder: RunningPonder | undefined;
let ours: Spawned | undefined;
let admin: pg.Client | undefined;

async function cleanup(): Promise<void> {
  await ours?.stop({ graceMs: 10_000 });
  await ponder?.child.stop({ graceMs: 10_000 });
  await admin?.end().catch(() => undefined);
  await releaseProverResources();
  await chain?.stop();
  if (!args.keep) for (const name of Object.values(DB)) await dropPostgresDatabase(name, SERVER_URL).catch(() => undefined);
}

interface Backfill {
  mode: Mode;
  ms: number;
  /** Ponder: from spawn to serving (build, database set-up), not part of `ms`. */
  startupMs?: number;
  /** Indexer process (ours: this one, all threads) + its PostgreSQL backends, over `ms`. */
  cpuMs: number;
}

/** CPU ms so far of the PostgreSQL backends connected to `database` (all of them are the indexer's while it runs). */
async function backendCpuMs(database: string): Promise<number> {
  const pids = await backendPids(admin!, database, APP)();
  return pids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
}

/** The indexer's modules, this checkout's or the baseline's (--baseline DIR: same layout, loaded in this process). */
interface IndexerModules {
  createIndexer: typeof createIndexer;
  openDatabase: typeof openDatabase;
  networkFromDeployment: typeof networkFromDeployment;
}
const OWN_MODULES: IndexerModules = { createIndexer, openDatabase, networkFromDeployment };
let baseModules: IndexerModules | undefined;
async function baselineModules(dir: string): Promise<IndexerModules> {
  const load = (path: string) => import(pathToFileURL(`${dir}/${path}`).href);
  const [indexer, db, config] = await Promise.all([load("indexer/indexer.ts"), load("core/db.ts"), load("indexer/config.ts")]);
  baseModules ??= {
    createIndexer: (indexer as typeof import("../indexer/indexer.ts")).createIndexer,
    openDatabase: (db as typeof import("../core/db.ts")).openDatabase,
    networkFromDeployment: (config as typeof import("../indexer/config.ts")).networkFromDeployment,
  };
  return baseModules;
}

async function oursBackfill(mode: Exclude<Mode, "ponder">): Promise<Backfill> {
  const base = mode.endsWith("@base");
  const unchecked = mode.startsWith("unchecked");
  const modules = base ? await baselineModules(args.baseline ?? "") : OWN_MODULES;
  const name = base ? DB.base : unchecked ? DB.skip : DB.verified;
  await recreatePostgresDatabase(name, SERVER_URL);
  const db = await modules.openDatabase({ url: databaseUrl(name, SERVER_URL), migrate: true });
  const sys = chain!.system;
  const indexer = modules.createIndexer({
    db,
    logger: args.log === "silent" ? silentLogger() : createLogger({ level: args.log, name: `indexer-${mode}` }),
    networks: [modules.networkFromDeployment(sys, { name: "bench", confirmations: 2, batchSize: 2000, pollingIntervalMs: 1000 })],
    skipProofVerification: unchecked ? skipProofs : false,
  });
  try {
    const cpu = process.cpuUsage();
    const pgCpu = await backendCpuMs(name);
    const t0 = performance.now();
    await indexer.start();
    await indexer.synced({ timeoutMs: 1_200_000 });
    const ms = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    const pgUsed = (await backendCpuMs(name)) - pgCpu;
    const [bets, results, verified] = await Promise.all([
      db.prisma.bet.count(),
      db.prisma.betResult.count(),
      db.prisma.betResult.count({ where: { verified: true } }),
    ]);
    const want = unchecked ? 0 : PROVEN;
    if (bets !== PROVEN + FILLER || results !== PROVEN || verified !== want)
      throw new Error(`ours (${mode}): ${bets} bets, ${results} results, ${verified} verified; want ${PROVEN + FILLER}, ${PROVEN}, ${want}`);
    return { mode, ms, cpuMs: (used.user + used.system) / 1000 + pgUsed };
  } finally {
    await indexer.stop();
    await db.close();
  }
}

async function ponderBackfill(keepServing: boolean): Promise<Backfill> {
  await ponder?.child.stop({ graceMs: 10_000 });
  ponder = undefined;
  await recreatePostgresDatabase(DB.ponder, SERVER_URL);
  const c = chain!;
  const started = await startPonder(
    {
      databaseUrl: databaseUrl(DB.ponder, SERVER_URL),
      rpcUrl: c.anvil.rpcUrl,
      chainId: c.anvil.chainId,
      betVault: c.system.betVault,
      startBlock: c.system.deployBlock,
      endBlock: c.endBlock,
    },
    1_200_000,
    async (pid) => (processCpuMs(pid) ?? Number.NaN) + (await backendCpuMs(DB.ponder)),
  );
  ponder = started;
  const client = new pg.Client({ connectionString: databaseUrl(DB.ponder, SERVER_URL), application_name: APP });
  await client.connect();
  try {
    const { rows } = await client.query<{ bets: string; results: string }>(
      `SELECT (SELECT count(*) FROM "${PONDER_SCHEMA}".bet) AS bets, (SELECT count(*) FROM "${PONDER_SCHEMA}".bet_result) AS results`,
    );
    if (Number(rows[0]?.bets) !== PROVEN + FILLER || Number(rows[0]?.results) !== PROVEN)
      throw new Error(`Ponder: ${rows[0]?.bets} bets, ${rows[0]?.results} results; want ${PROVEN + FILLER}, ${PROVEN}\n${started.child.stdout().slice(-4000)}`);
  } finally {
    await client.end();
  }
  if (!keepServing) {
    await started.child.stop({ graceMs: 10_000 });
    ponder = undefined;
  }
  return { mode: "ponder", ms: started.backfillMs, startupMs: started.startupMs, cpuMs: started.backfillCpuMs };
}

async function main(): Promise<boolean> {
  const version = ensurePonderInstalled(log);
  const proofs = readProofCache(PROVEN);
  if (proofs.length < PROVEN) throw new Error(`${proofs.length} of ${PROVEN} proofs cached: run \`npx tsx bench/proof-cache.ts --bets ${PROVEN}\` first`);
  admin = new pg.Client({ connectionString: SERVER_URL, application_name: APP });
  await admin.connect();

  const setup = performance.now();
  chain = await buildBenchChain(proofs, FILLER);
  const range = `blocks ${chain.system.deployBlock}–${chain.endBlock}`;
  log(
    `chain ready in ${fmt.s(performance.now() - setup)}: ${PROVEN} bets settled with genuine proofs + ${FILLER} refunded, ${fmt.int(chain.events)} events, ${range}`,
  );

  // ---------------------------------------------------------------------------- backfill
  const backfills: Backfill[] = [];
  for (let run = 1; run <= BACKFILL_RUNS; run++) {
    for (const mode of MODE_LIST) {
      const result = mode === "ponder" ? await ponderBackfill(run === BACKFILL_RUNS) : await oursBackfill(mode);
      backfills.push(result);
      log(`backfill run ${run} ${mode}: ${fmt.s(result.ms)}${result.startupMs === undefined ? "" : ` (+ ${fmt.s(result.startupMs)} start-up)`}`);
    }
  }

  const rate = (xs: Backfill[]) => median(xs.map((x) => chain!.events / (x.ms / 1000)));
  const of = (mode: Mode) => backfills.filter((x) => x.mode === mode);
  const bf = { unchecked: rate(of("unchecked")), ponder: rate(of("ponder")), verified: rate(of("verified")) };
  const cpuPerEvent = (xs: Backfill[]) => median(xs.map((x) => x.cpuMs / chain!.events));
  const ponderNote = () =>
    `from serving to "Completed historical indexing"; start-up ${fmt.s(median(of("ponder").map((x) => x.startupMs ?? 0)))} before it (not counted)`;
  const labels: Record<Mode, [string, () => string]> = {
    unchecked: ["ours, proofs not checked (like-for-like)", () => "results stored verified: false"],
    ponder: [`Ponder ${version}`, ponderNote],
    verified: ["ours, every genuine proof verified", () => "Groth16 per settlement, worker pool"],
    "unchecked@base": ["baseline, proofs not checked", () => `${args.baseline}`],
    "verified@base": ["baseline, every genuine proof verified", () => `${args.baseline}`],
  };
  log();
  log(
    `Backfill — ${fmt.int(chain.events)} BetVault events (${PROVEN} settled with genuine proofs, ${FILLER} refunded), ${range}, median of ${BACKFILL_RUNS} interleaved runs`,
  );
  log(
    table(
      ["indexer", "events/s", "wall", "CPU ms/event (indexer + pg)", "note"],
      MODE_LIST.map((mode) => [
        labels[mode][0],
        fmt.int(rate(of(mode))),
        fmt.s(median(of(mode).map((x) => x.ms))),
        fmt.ms(cpuPerEvent(of(mode))),
        labels[mode][1](),
      ]),
      [false, true, true, true, false],
    ),
  );
  for (const mode of ["unchecked", "verified"] as const) {
    if (of(mode).length > 0 && of(`${mode}@base`).length > 0)
      log(`${mode}: this checkout ÷ baseline ${fmt.ratio(rate(of(mode)) / rate(of(`${mode}@base`)))} in events/s (medians)`);
  }
  if (!MODE_LIST.includes("ponder") || !MODE_LIST.includes("verified")) {
    log("(no wallet page: it needs the ponder and verified modes)");
    return true;
  }

  // ------------------------------------------------------------------------- wallet page
  const served = await spawnServer<{ url: string }>(fileURLToPath(new URL("./serve-peer.ts", import.meta.url)), {
    args: ["stack"],
    env: { BENCH_SERVE_DATABASE_URL: databaseUrl(DB.verified, SERVER_URL) },
    nodeFlags: ["--max-semi-space-size=32"],
    ready: (line) => line.role === "stack",
  });
  ours = served.child;
  const player = chain.provenPlayer.toLowerCase();
  const endpoints = {
    ours: {
      label: "this service (npm start shape)",
      url: served.info.url,
      body: requestBody(OURS_PAGE, { wallet: chain.provenPlayer }),
      pid: ours.pid,
      db: DB.verified,
    },
    ponder: { label: `Ponder ${version}`, url: `${ponder!.url}/graphql`, body: requestBody(PONDER_PAGE, { player }), pid: ponder!.child.pid, db: DB.ponder },
  };
  const oursAnswer = await post(endpoints.ours.url, endpoints.ours.body);
  const ponderAnswer = await post(endpoints.ponder.url, endpoints.ponder.body);
  const oursBets = (oursAnswer.json.data?.playerBets as { nodes?: PageBet[] } | undefined)?.nodes;
  const ponderBets = (ponderAnswer.json.data?.bets as { items?: PageBet[] } | undefined)?.items;
  if (!oursBets || oursAnswer.json.errors) throw new Error(`ours: HTTP ${oursAnswer.status} ${oursAnswer.text.slice(0, 500)}`);
  if (!ponderBets || ponderAnswer.json.errors) throw new Error(`Ponder: HTTP ${ponderAnswer.status} ${ponderAnswer.text.slice(0, 500)}`);
  const [a, b] = [JSON.stringify(essence(oursBets)), JSON.stringify(essence(ponderBets))];
  if (oursBets.length !== PAGE || a !== b) throw new Error(`the answers differ:\nours   ${a.slice(0, 600)}\nPonder ${b.slice(0, 600)}`);
  if (!oursBets.every((bet) => bet.result)) throw new Error("the page's bets should all carry results");
  log(`checked: both answers carry the same ${PAGE} bets (ids ${oursBets[0]?.betId}…${oursBets.at(-1)?.betId}), statuses and results`);
  log(`  bytes: ours ${oursAnswer.text.length}, Ponder ${ponderAnswer.text.length}`);

  const loads: Record<keyof typeof endpoints, RunStats[]> = { ours: [], ponder: [] };
  for (let run = 1; run <= RUNS; run++) {
    for (const key of ["ours", "ponder"] as const) {
      const e = endpoints[key];
      const options = { url: e.url, bodies: [e.body], connections: CONNECTIONS, cpu: { server: () => [e.pid], pg: backendPids(admin, e.db, APP) } };
      if (WARMUP > 0) await runLoad({ ...options, seconds: WARMUP });
      const stats = await runLoad({ ...options, seconds: DURATION });
      loads[key].push(stats);
      log(`load run ${run} ${key}: ${fmt.rps(stats.rps)} req/s, p50 ${fmt.ms(stats.p50)} ms, p99 ${fmt.ms(stats.p99)} ms, errors ${errorCount(stats)}`);
    }
  }

  // ------------------------------------------------------------------------------ report
  const m = (key: keyof typeof endpoints, f: (s: RunStats) => number) => median(loads[key].map(f));
  log();
  log(`Wallet page — ${PAGE} newest bets with results (proof included), ${CONNECTIONS} connections, ${DURATION} s runs, median of ${RUNS} interleaved runs`);
  const rows = (["ours", "ponder"] as const).map((key) => [
    endpoints[key].label,
    fmt.rps(m(key, (s) => s.rps)),
    fmt.ms(m(key, (s) => s.p50)),
    fmt.ms(m(key, (s) => s.p99)),
    fmt.ms(m(key, (s) => s.cpuMs.server ?? Number.NaN)),
    fmt.ms(m(key, (s) => s.cpuMs.pg ?? Number.NaN)),
    String(loads[key].reduce((n, s) => n + errorCount(s), 0)),
  ]);
  log(table(["server", "req/s", "p50 ms", "p99 ms", "server CPU ms/req", "pg CPU ms/req", "errors"], rows, [false, true, true, true, true, true, true]));
  const ratio = m("ours", (s) => s.rps) / m("ponder", (s) => s.rps);
  const load = loadavg()[0] ?? Number.NaN;
  log();
  log(
    `ours ÷ Ponder: wallet page req/s ${fmt.ratio(ratio)}; backfill events/s ${fmt.ratio(bf.unchecked / bf.ponder)} (like-for-like), ${fmt.ratio(bf.verified / bf.ponder)} (proofs verified)`,
  );
  log(
    `machine: ${availableParallelism()} CPUs, load average ${load.toFixed(2)} at the end${load > availableParallelism() ? " — LOADED: compare CPU per request rather than throughput" : ""}`,
  );

  writeFileSync(
    PLOT,
    barPlot(`bench:ponder — this service vs Ponder ${version} (${availableParallelism()} CPUs, load ${load.toFixed(1)})`, [
      {
        title: "backfill events/s",
        bars: [
          { label: "ours, proofs not checked", value: bf.unchecked },
          { label: `Ponder ${version}`, value: bf.ponder, highlight: true },
          { label: "ours, proofs verified", value: bf.verified },
        ],
      },
      {
        title: "wallet page req/s",
        bars: (["ours", "ponder"] as const).map((k) => ({ label: endpoints[k].label, value: m(k, (s) => s.rps), highlight: k === "ponder" })),
      },
      {
        title: "wallet page p99 ms",
        bars: (["ours", "ponder"] as const).map((k) => ({ label: endpoints[k].label, value: m(k, (s) => s.p99), highlight: k === "ponder" })),
      },
    ]),
  );
  log(`wrote the plot to ${PLOT}`);
  const errors = Object.values(loads)
    .flat()
    .reduce((n, s) => n + errorCount(s), 0);
  return errors === 0 && ratio >= 1 && bf.unchecked >= bf.ponder;
}

await runBenchmark(main, cleanup, { watchdogMs: 40 * 60_000 });
