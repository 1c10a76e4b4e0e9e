// Abuse load test (issue 5): does a well-behaved client keep its service while one client floods
// and others send query bombs? Loopback only, bounded in time (< 4 min with the defaults).
//
//   npx tsx bench/abuse.ts [--duration 10] [--runs 3] [--good-rate 20] [--flood-rate 300]
//                          [--bomb-rate 50] [--db auto|postgres|pglite] [--bets 2000]
//
// Three processes of ours: the stack with the contract's default protection (bench/serve-protected.ts:
// rate limit 300 per 10 s per client, TRUST_PROXY_HOPS=1, depth 8 / aliases 30 / cost 5000), this
// process (the well-behaved client, open loop at a fixed rate), and an attacker child (this file
// with --role attacker: the flood and the bombs, each at a fixed, evenly paced rate). Clients are
// told apart by the last X-Forwarded-For entry, as behind one trusted proxy. Phases alternate
// A (baseline), B (under attack), A, B …; see bench/README.md for how to read the output.
import { execFileSync } from "node:child_process";
import http from "node:http";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { databaseUrl as databaseUrlOn, dropPostgresDatabase, recreatePostgresDatabase } from "../test/db.ts";
import { REQUEST_POINTS } from "../gateway/points-budget.ts";
import { spawnTsx, type Spawned } from "../test/spawn.ts";
import { benchConfig, stopChild } from "./common.ts";
import { runBenchmark } from "./load.ts";

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    role: { type: "string", default: "main" },
    duration: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
    warmup: { type: "string", default: "3" },
    "good-rate": { type: "string", default: "20" },
    "flood-rate": { type: "string", default: "300" },
    "bomb-rate": { type: "string", default: "50" },
    db: { type: "string", default: "auto" },
    bets: { type: "string", default: "2000" },
    breakdown: { type: "boolean", default: false },
  },
});

function positiveNumber(name: string, raw: string | undefined, min = 1): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number ≥ ${min}, got ${raw}`);
  return value;
}

const DURATION = positiveNumber("duration", args.duration);
const RUNS = Math.round(positiveNumber("runs", args.runs));
/** Seconds the good client runs before the first window, and the attack runs before a B window. */
const WARMUP = positiveNumber("warmup", args.warmup, 1);
const GOOD_RATE = positiveNumber("good-rate", args["good-rate"]);
const FLOOD_RATE = positiveNumber("flood-rate", args["flood-rate"]);
const BOMB_RATE = positiveNumber("bomb-rate", args["bomb-rate"]);
const DB_MODE = args.db ?? "auto";
const BETS = Math.round(positiveNumber("bets", args.bets, 100));
/** Also run each attacker alone (B flood only, B bombs only) after every B: which one hurts. */
const BREAKDOWN = args.breakdown ?? false;
if (!["auto", "postgres", "pglite"].includes(DB_MODE)) throw new Error(`--db takes auto, postgres or pglite; got ${DB_MODE}`);

const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const DB_NAME = "bench_abuse";
/** Seconds between the end of an attack and the next baseline window (in-flight requests drain). */
const COOLDOWN = 2;
/** Hard bound of the whole run; past it everything is stopped and the run fails. */
const WATCHDOG_MS = 235_000;
const REQUEST_TIMEOUT_MS = 10_000;

/** Targets of the issue. */
const TARGET_THROUGHPUT_SHARE = 0.95;
const TARGET_P99_FACTOR = 2;

/** Client addresses (documentation ranges): the last X-Forwarded-For entry names the client. */
const GOOD_ADDRESS = "192.0.2.10";
const floodAddress = (run: number) => `203.0.113.${run}`;
/** A fresh address per bomb: 198.18.0.0/15 has room for 131 072 of them. */
const bombAddress = (n: number) => `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

function log(line = ""): void {
  process.stdout.write(`${line}\n`);
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

const fmt = {
  int: (n: number) => Math.round(n).toLocaleString("en-US"),
  rps: (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—"),
  ms: (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—"),
  pct: (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : "—"),
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : "—"),
};

function table(header: string[], rows: string[][], alignRight: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (alignRight[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${"-".repeat(w + 1)}:` : `${"-".repeat(w + 2)}`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const databaseUrl = (name: string) => databaseUrlOn(name, SERVER_URL);

// ---------------------------------------------------------------------------------------------
// HTTP: one POST over a keep-alive agent, and an evenly paced open-loop sender
// ---------------------------------------------------------------------------------------------

interface Exchange {
  status: number; // 0: no response (socket error or timeout)
  text: string;
  ms: number;
  sentAt: number;
  doneAt: number;
  error?: string;
}

function post(agent: http.Agent, target: URL, body: Buffer, client: string): Promise<Exchange> {
  const sentAt = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number, text: string, error?: string) => {
      if (settled) return;
      settled = true;
      const doneAt = performance.now();
      resolve({ status, text, ms: doneAt - sentAt, sentAt, doneAt, error });
    };
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length, "x-forwarded-for": client },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => finish(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8")));
        res.on("error", (error) => finish(0, "", error.message));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error("timeout")));
    req.on("error", (error) => finish(0, "", error.message));
    req.end(body);
  });
}

/**
 * Calls `fire(i)` at start + i/rate (open loop: a slow answer never delays the next request)
 * until `seconds` have passed or `stopped()` says so. Resolves when the schedule is done.
 */
function pace(rate: number, seconds: number, fire: (i: number, scheduledAt: number) => void, stopped: () => boolean = () => false): Promise<void> {
  if (rate <= 0) return Promise.resolve();
  const interval = 1000 / rate;
  const start = performance.now();
  const total = Number.isFinite(seconds) ? Math.round(rate * seconds) : Number.POSITIVE_INFINITY;
  let i = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && !stopped() && start + i * interval <= now) {
        fire(i, start + i * interval);
        i++;
      }
      if (i >= total || stopped()) return resolve();
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    tick();
  });
}

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } & Record<string, unknown> }[];
}

function parse(text: string): GraphQLBody | undefined {
  try {
    return JSON.parse(text) as GraphQLBody;
  } catch {
    return undefined;
  }
}

/** "200 data", "429 RATE_LIMITED", "400 QUERY_TOO_COMPLEX", "0 timeout" … */
function outcomeOf(exchange: Exchange): { key: string; code: string | undefined; withData: boolean } {
  if (exchange.status === 0) return { key: `no response (${exchange.error ?? "?"})`, code: undefined, withData: false };
  const body = parse(exchange.text);
  const code = body?.errors?.[0]?.extensions?.code;
  const withData = body?.data !== undefined && body.data !== null;
  const ok = exchange.status >= 200 && exchange.status < 300;
  return { key: `${exchange.status} ${ok && withData && !code ? "data" : (code ?? (withData ? "data" : "no body"))}`, code, withData };
}

// ---------------------------------------------------------------------------------------------
// Requests: the good client's mix, the flood, the bombs
// ---------------------------------------------------------------------------------------------

interface Fixtures {
  wallets: string[];
  whale: string;
  settled: { chainId: number; betId: string }[];
}

const BET_RESULT = `query BetResult($chainId: ChainId!, $betId: UInt256!) {
  betResult(chainId: $chainId, betId: $betId) {
    chainId betId player stake game status confirmations finalized
    result { outcome won payout proof { piA piB piC publicSignals verified } }
  }
}`;

const PLAYER_BETS = `query PlayerBets($wallet: Address!) {
  playerBets(wallet: $wallet, first: 20) {
    totalCount
    nodes { chainId betId status stake game placedBlock confirmations result { won payout } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const NETWORK_CONFIGS = `query NetworkConfigs {
  networkConfigs { chainId name confirmations contracts { name address deployBlock } indexing { indexedBlock headBlock lagBlocks isReady } }
}`;

const body = (query: string, variables: Record<string, unknown> = {}) => JSON.stringify({ query, variables });

/** The realistic mix, in rotation: betResult of a settled bet, a wallet's first page, the networks. */
function goodMix(fixtures: Fixtures): { name: string; body: string }[] {
  const mix: { name: string; body: string }[] = [];
  const n = Math.max(fixtures.wallets.length, 12);
  for (let i = 0; i < n; i++) {
    const bet = fixtures.settled[i % fixtures.settled.length]!;
    mix.push({ name: "betResult", body: body(BET_RESULT, { chainId: bet.chainId, betId: bet.betId }) });
    mix.push({ name: "playerBets", body: body(PLAYER_BETS, { wallet: fixtures.wallets[i % fixtures.wallets.length]! }) });
    mix.push({ name: "networkConfigs", body: body(NETWORK_CONFIGS) });
  }
  return mix;
}

interface BombKind {
  kind: string;
  what: string;
  body: string;
  /** The refusal expected: HTTP status and error code. */
  expect: { status: number; code: string };
}

/**
 * The bombs. Every one is refused before any subgraph is asked. The depth limit (8) cannot be
 * reached by a valid query — no path through this schema is deeper than 6 fields
 * (playerBets → edges → node → network → verificationKey → json) and introspection adds no depth —
 * so depth bombs are refused one step earlier, by validation, and are expected as such.
 */
function bombs(fixtures: Fixtures): BombKind[] {
  const wallet = fixtures.whale;
  const bet = fixtures.settled[0]!;
  // 31+ aliases, each of which would be a full betResult with its proof: ~40 KB, under the body limit.
  const aliases = Array.from(
    { length: 400 },
    (_, i) => `a${i}: betResult(chainId: ${bet.chainId}, betId: "${bet.betId}") { betId result { proof { piA piB piC } } }`,
  ).join("\n");
  const betFields =
    "chainId betId player stake game status placedBlock placedTx confirmations finalized result { outcome won payout proof { piA piB piC publicSignals } }";
  // Exponential fragments: F0 expands to 2^30 copies of F30.
  const expFragments = [
    "query FragmentBomb { ...F0 }",
    ...Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`),
    `fragment F30 on Query { networkConfigs { chainId name contracts { name address } } }`,
  ].join("\n");
  // Fragments doubling inside a list of 100 bets.
  const listFragments = [
    `query FragmentListBomb($wallet: Address!) { playerBets(wallet: $wallet, first: 100) { nodes { ...B0 } } }`,
    ...Array.from({ length: 20 }, (_, i) => `fragment B${i} on Bet { ...B${i + 1} ...B${i + 1} }`),
    `fragment B20 on Bet { ${betFields} }`,
  ].join("\n");
  // 14 levels: valid up to `name`, then fields that do not exist.
  const deep = "networkConfigs { contracts { name { a { b { c { d { e { f { g { h { i { j { k } } } } } } } } } } } } }";
  const introspection = (d: number): string => (d === 0 ? "name" : `name fields { name type { name ofType { name ofType { ${introspection(d - 1)} } } } }`);
  return [
    {
      kind: "alias",
      what: "400 aliased betResult(… proof) (≈40 KB)",
      body: body(`query AliasBomb {\n${aliases}\n}`),
      expect: { status: 400, code: "QUERY_TOO_COMPLEX" },
    },
    {
      kind: "cost",
      what: "10 aliased playerBets(first: 100) edges+nodes with proofs and network contracts",
      body: body(
        `query CostBomb($wallet: Address!) { ${Array.from(
          { length: 10 },
          (_, i) => `p${i}: playerBets(wallet: $wallet, first: 100) {
        edges { cursor node { ${betFields} network { contracts { name address deployBlock } } } }
        nodes { ${betFields} network { contracts { name address deployBlock } } } }`,
        ).join("\n")} }`,
        { wallet },
      ),
      expect: { status: 400, code: "QUERY_TOO_COMPLEX" },
    },
    {
      kind: "fragment-exp",
      what: "fragments doubling 30 times (2^30 networkConfigs)",
      body: body(expFragments),
      expect: { status: 400, code: "QUERY_TOO_COMPLEX" },
    },
    {
      kind: "fragment-list",
      what: "fragments doubling 20 times inside playerBets(first: 100)",
      body: body(listFragments, { wallet }),
      expect: { status: 400, code: "QUERY_TOO_COMPLEX" },
    },
    {
      kind: "depth",
      what: "14 nested selections (the schema ends at 6)",
      body: body(`query DepthBomb { ${deep} }`),
      expect: { status: 400, code: "GRAPHQL_VALIDATION_FAILED" },
    },
    {
      kind: "depth-introspection",
      what: "introspection nested 6 × (fields → type → ofType)",
      body: body(`query IntrospectionBomb { __schema { types { ${introspection(6)} } } }`),
      expect: { status: 400, code: "GRAPHQL_VALIDATION_FAILED" },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// The attacker child (--role attacker): flood + bombs on command, stats back as JSON lines
// ---------------------------------------------------------------------------------------------

interface AttackerConfig {
  gateway: string;
  fixtures: Fixtures;
}

interface Tally {
  sent: number;
  /** Not sent: the in-flight cap was reached (the server was that far behind). */
  skipped: number;
  outcomes: Record<string, number>;
  /** 2xx responses carrying data. */
  withData: number;
  /** Refused exactly as expected (flood: 429 RATE_LIMITED; bombs: their expected status and code). */
  asExpected: number;
  /** Latency of the responses refused as expected: how long the refusal took. */
  p50: number;
  p99: number;
  /** Per second since the attack started (by completion time): [sent, 2xx with data, refused as expected]. */
  timeline: [number, number, number][];
}

interface AttackReport {
  run: number;
  seconds: number;
  flood: Tally;
  bombs: Record<string, Tally>;
  cpuMs: number;
}

async function attackerMain(): Promise<void> {
  const config = JSON.parse(benchConfig.BENCH_ABUSE_ATTACKER ?? "{}") as AttackerConfig;
  const target = new URL(config.gateway);
  const floodBodies = goodMix(config.fixtures).map((m) => Buffer.from(m.body));
  const kinds = bombs(config.fixtures).map((b) => ({ ...b, buffer: Buffer.from(b.body) }));
  /** Per attacker (flood, bombs): more requests waiting than this and the next ones are not sent. */
  const MAX_IN_FLIGHT = 256;
  const lines = createInterface({ input: process.stdin });
  lines.on("close", () => process.exit(0)); // the parent is gone
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

  for await (const line of lines) {
    const command = JSON.parse(line) as { cmd: "attack"; run: number; seconds: number; floodRate: number; bombRate: number } | { cmd: "exit" };
    if (command.cmd === "exit") break;
    const cpuBefore = process.cpuUsage();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 * MAX_IN_FLIGHT });
    const tally = (): Tally & { latencies: number[] } => ({
      sent: 0,
      skipped: 0,
      outcomes: {},
      withData: 0,
      asExpected: 0,
      p50: 0,
      p99: 0,
      timeline: [],
      latencies: [],
    });
    const flood = tally();
    const perKind = new Map(kinds.map((k) => [k.kind, tally()]));
    const attackStart = performance.now();
    const second = (at: number) => Math.max(0, Math.floor((at - attackStart) / 1000));
    const bump = (t: Tally, at: number, column: 0 | 1 | 2) => {
      const s = second(at);
      while (t.timeline.length <= s) t.timeline.push([0, 0, 0]);
      t.timeline[s]![column]++;
    };
    let floodInFlight = 0;
    let bombsInFlight = 0;
    const pending = new Set<Promise<void>>();
    const track = (promise: Promise<void>) => {
      pending.add(promise);
      void promise.finally(() => pending.delete(promise));
    };
    const record = (t: Tally & { latencies: number[] }, exchange: Exchange, expected: (e: Exchange, o: ReturnType<typeof outcomeOf>) => boolean) => {
      const outcome = outcomeOf(exchange);
      t.outcomes[outcome.key] = (t.outcomes[outcome.key] ?? 0) + 1;
      bump(t, exchange.sentAt, 0);
      if (exchange.status >= 200 && exchange.status < 300 && outcome.withData) {
        t.withData++;
        bump(t, exchange.doneAt, 1);
      }
      if (expected(exchange, outcome)) {
        t.asExpected++;
        t.latencies.push(exchange.ms);
        bump(t, exchange.doneAt, 2);
      }
    };
    const floodFrom = floodAddress(command.run);
    let bombCounter = command.run * 20_000;
    await Promise.all([
      pace(command.floodRate, command.seconds, (i) => {
        if (floodInFlight >= MAX_IN_FLIGHT) return void flood.skipped++;
        flood.sent++;
        floodInFlight++;
        track(
          post(agent, target, floodBodies[i % floodBodies.length]!, floodFrom).then((exchange) => {
            floodInFlight--;
            record(flood, exchange, (e, o) => e.status === 429 && o.code === "RATE_LIMITED");
          }),
        );
      }),
      pace(command.bombRate, command.seconds, (i) => {
        const kind = kinds[i % kinds.length]!;
        const t = perKind.get(kind.kind)!;
        if (bombsInFlight >= MAX_IN_FLIGHT) return void t.skipped++;
        t.sent++;
        bombsInFlight++;
        track(
          post(agent, target, kind.buffer, bombAddress(bombCounter++)).then((exchange) => {
            bombsInFlight--;
            record(t, exchange, (e, o) => e.status === kind.expect.status && o.code === kind.expect.code && !o.withData);
          }),
        );
      }),
    ]);
    await Promise.all([...pending]);
    agent.destroy();
    const finish = (t: Tally & { latencies: number[] }): Tally => {
      const sorted = t.latencies.sort((a, b) => a - b);
      const { latencies: _, ...rest } = t;
      return { ...rest, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const cpu = process.cpuUsage(cpuBefore);
    const report: AttackReport = {
      run: command.run,
      seconds: command.seconds,
      flood: finish(flood),
      bombs: Object.fromEntries([...perKind].map(([k, t]) => [k, finish(t)])),
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  }
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// CPU and memory from /proc (Linux; elsewhere "—")
// ---------------------------------------------------------------------------------------------

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Linux PSI: µs during which some runnable task waited for a CPU (machine-wide), or NaN. */
function cpuPressureUs(): number {
  try {
    const match = /^some .*total=(\d+)/m.exec(readFileSync("/proc/pressure/cpu", "utf8"));
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

// ---------------------------------------------------------------------------------------------
// Children
// ---------------------------------------------------------------------------------------------

/** A child of this benchmark (stdin open: the server watches it, the attacker takes commands on it). */
function startChild(script: string, extraArgs: string[], env: Record<string, string>, stderr: "inherit" | "collect"): Spawned {
  return spawnTsx(script, { args: extraArgs, env, stdin: "pipe", stderr });
}

interface Served {
  pid: number;
  database: string;
  gateway: string;
  protection: {
    limits: { maxDepth: number; maxAliases: number; maxCost: number };
    rateLimit: { capacity: number; refillPerSecond: number; trustProxyHops: number } | null;
  };
  fixtures: Fixtures & { bets: number; counts: Record<string, number> };
}

/** Server log lines (stderr of the server child): counted by message, never echoed under load. */
const serverLogs = { lines: 0, byMessage: new Map<string, number>(), other: [] as string[] };

function collectLogs(child: Spawned): void {
  createInterface({ input: child.child.stderr! }).on("line", (line) => {
    serverLogs.lines++;
    let key: string;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } | string };
      const err = typeof entry.err === "string" ? entry.err : entry.err?.message;
      key = `level ${entry.level ?? "?"}: ${entry.msg ?? ""}${err ? ` (${err.slice(0, 120)})` : ""}`;
    } catch {
      if (/npm warn/i.test(line)) return;
      key = `text: ${line.slice(0, 160)}`;
    }
    serverLogs.byMessage.set(key, (serverLogs.byMessage.get(key) ?? 0) + 1);
  });
}

// ---------------------------------------------------------------------------------------------
// The good client: one open-loop stream for the whole run; windows are cut out afterwards
// ---------------------------------------------------------------------------------------------

interface GoodRecord {
  name: string;
  scheduledAt: number;
  exchange: Exchange;
  ok: boolean;
  outcome: string;
}

type Phase = "A" | "B" | "B flood only" | "B bombs only";

interface Window {
  phase: Phase;
  run: number;
  start: number;
  end: number;
  cpu: { server: number; attacker: number; self: number; pg: number; wall: number; pressure: number };
  load1: number;
  /** Server RSS at the end of the window, MB. */
  rss: number;
  /** B: when the attack was started (this process's clock). */
  attackStartedAt?: number;
  /** B: the server's CPU in each second since the attack started, ms. */
  serverCpuPerSecond?: number[];
  attack?: AttackReport;
}

interface WindowStats {
  rps: number;
  p50: number;
  p99: number;
  sent: number;
  ok: number;
  failures: Record<string, number>;
  latencies: number[];
  /** How late this process sent requests (its own event-loop lag), p99 ms. */
  lagP99: number;
}

function windowStats(records: GoodRecord[], windows: Window[]): WindowStats {
  const seconds = windows.reduce((sum, w) => sum + (w.end - w.start) / 1000, 0);
  const inSent = (r: GoodRecord) => windows.some((w) => r.exchange.sentAt >= w.start && r.exchange.sentAt < w.end);
  /** Sent in a window and answered before that window ended. */
  const inWindow = (r: GoodRecord) => windows.some((w) => r.exchange.sentAt >= w.start && r.exchange.doneAt < w.end);
  const sent = records.filter(inSent);
  const latencies = sent
    .filter((r) => r.ok)
    .map((r) => r.exchange.ms)
    .sort((a, b) => a - b);
  const failures: Record<string, number> = {};
  for (const r of sent) if (!r.ok) failures[r.outcome] = (failures[r.outcome] ?? 0) + 1;
  const lags = sent.map((r) => r.exchange.sentAt - r.scheduledAt).sort((a, b) => a - b);
  return {
    // Throughput: good answers to requests sent in a window that arrived before it ended, per
    // second of window (answers to requests sent before the window are not credited to it).
    rps: records.filter((r) => r.ok && inWindow(r)).length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    sent: sent.length,
    ok: latencies.length,
    failures,
    latencies,
    lagP99: percentile(lags, 99),
  };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

let server: Spawned | undefined;
let attacker: Spawned | undefined;
let createdDatabase = false;
let cleaning: Promise<void> | undefined;

async function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    if (attacker) {
      attacker.child.stdin?.end(); // lets it exit by itself …
      await stopChild(attacker).catch((e: unknown) => log(`could not stop the attacker child: ${String(e)}`)); // … or stops it by pid
    }
    if (server) await stopChild(server).catch((e: unknown) => log(`could not stop the server child: ${String(e)}`));
    if (createdDatabase) {
      await dropPostgresDatabase(DB_NAME, SERVER_URL).then(
        () => log(`dropped database ${DB_NAME}`),
        (e: unknown) => log(`could not drop database ${DB_NAME}: ${String(e)}`),
      );
    }
  })();
  return cleaning;
}

async function main(): Promise<boolean> {
  const started = performance.now();
  const here = fileURLToPath(import.meta.url);
  log("Public Bet Results API — abuse load test (issue 5)");
  log(
    `  host      ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "?"}), shared by the server, the load generators${DB_MODE === "pglite" ? "" : " and PostgreSQL"}; loadavg at start ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );

  // 1. Database ---------------------------------------------------------------------------------
  let databaseUrlForChild = "";
  if (DB_MODE !== "pglite") {
    try {
      await recreatePostgresDatabase(DB_NAME, SERVER_URL);
      createdDatabase = true;
      databaseUrlForChild = databaseUrl(DB_NAME);
    } catch (error) {
      if (DB_MODE === "postgres") throw error;
      log(`  (PostgreSQL at ${new URL(SERVER_URL).host} unavailable: ${(error as Error).message}; using PGlite in memory)`);
    }
  }

  // 2. The protected stack in a child process -----------------------------------------------------
  const serveScript = fileURLToPath(new URL("./serve-protected.ts", import.meta.url));
  // APOLLO_TELEMETRY_DISABLED: @apollo/gateway otherwise probes cloud metadata endpoints at start
  // and exports usage metrics to Apollo — traffic off this machine, which this benchmark must not make.
  const serveEnv = {
    BENCH_SERVE_DATABASE_URL: databaseUrlForChild,
    BENCH_SERVE_BETS: String(BETS),
    BENCH_SERVE_WATCH_STDIN: "1",
    APOLLO_TELEMETRY_DISABLED: "true",
  };
  if (databaseUrlForChild) {
    // PostgreSQL: seed in a short-lived child first, so the serving process holds only what serves.
    const seedStarted = performance.now();
    const seeder = startChild(serveScript, [], { ...serveEnv, BENCH_SERVE_MODE: "seed" }, "inherit");
    const timer = setTimeout(() => void stopChild(seeder), 120_000);
    const { code } = await seeder.closed;
    clearTimeout(timer);
    const out = seeder.stdout();
    if (code !== 0 || !out.includes('"seeded"')) throw new Error(`seeding failed (exit code ${code}): ${out.slice(0, 300)}`);
    log(`  seeded    ${fmt.int(BETS)} fixture bets into ${DB_NAME} in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
  }
  server = startChild(serveScript, [], { ...serveEnv, BENCH_SERVE_MODE: databaseUrlForChild ? "serve" : "seed+serve" }, "collect");
  collectLogs(server);
  const served = await server.waitForJson<Served>((v) => typeof v.gateway === "string", 120_000, "its URLs");
  const target = new URL(served.gateway);
  const rl = served.protection.rateLimit;
  log(
    `  server    child pid ${served.pid}: gateway ${served.gateway}; ${served.database === "postgres" ? `PostgreSQL database ${DB_NAME} (fresh, dropped at the end)` : "PGlite in memory (in the server process)"}, ` +
      `${fmt.int(served.fixtures.bets)} fixture bets (${Object.entries(served.fixtures.counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")})`,
  );
  log(
    `  protection rate limit ${rl ? `${rl.capacity} points per client refilled at ${rl.refillPerSecond}/s, trustProxyHops ${rl.trustProxyHops}` : "OFF"}; ` +
      `limits depth ${served.protection.limits.maxDepth}, aliases ${served.protection.limits.maxAliases}, cost ${served.protection.limits.maxCost}`,
  );
  if (rl?.trustProxyHops !== 1) throw new Error("the server child does not run the contract's rate limit with one trusted proxy hop");

  // 3. The attacker child -------------------------------------------------------------------------
  attacker = startChild(
    here,
    ["--role", "attacker"],
    {
      BENCH_ABUSE_ATTACKER: JSON.stringify({ gateway: served.gateway, fixtures: served.fixtures } satisfies AttackerConfig),
    },
    "inherit",
  );
  await attacker.waitForJson((v) => v.ready === true, 60_000, "ready");
  // Requests a second the budget sustains at the cheapest price (every request pays at least REQUEST_POINTS).
  const sustained = rl.refillPerSecond / REQUEST_POINTS;
  log(
    `  clients   good ${GOOD_ADDRESS}: ${GOOD_RATE} req/s open loop (budget ${fmt.rps(sustained)} req/s sustained), mix betResult / playerBets(first: 20) / networkConfigs`,
  );
  log(`            flood ${floodAddress(1)}…: ${FLOOD_RATE} req/s from one address (${fmt.ratio(FLOOD_RATE / sustained)} its sustained budget), the same mix`);
  log(
    `            bombs: ${BOMB_RATE} req/s in rotation over ${bombs(served.fixtures).length} kinds, a fresh address per bomb (attacker child pid ${attacker.pid})`,
  );
  log(
    `  phases    ${BREAKDOWN ? "A, B, B flood only, B bombs only" : "A, B"} in turn, ${RUNS} runs: A = good client alone for ${DURATION} s; B = attack for ${WARMUP} s, then ${DURATION} s measured while it goes on; ${COOLDOWN} s pause after each attack`,
  );
  log();

  // 4. Pre-checks -------------------------------------------------------------------------------
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  log("pre-checks (one request each):");
  let precheckOk = true;
  const mix = goodMix(served.fixtures);
  for (const m of mix.slice(0, 3)) {
    const exchange = await post(agent, target, Buffer.from(m.body), GOOD_ADDRESS);
    const o = outcomeOf(exchange);
    const ok = exchange.status === 200 && o.withData && !o.code;
    precheckOk &&= ok;
    log(`  good  ${m.name.padEnd(20)} ${o.key.padEnd(32)} ${fmt.ms(exchange.ms).padStart(7)} ms  ${ok ? "ok" : `FAIL ${exchange.text.slice(0, 200)}`}`);
  }
  const kinds = bombs(served.fixtures);
  for (const [i, kind] of kinds.entries()) {
    const exchange = await post(agent, target, Buffer.from(kind.body), bombAddress(i));
    const o = outcomeOf(exchange);
    const ok = exchange.status === kind.expect.status && o.code === kind.expect.code && !o.withData;
    precheckOk &&= ok;
    const detail = parse(exchange.text)?.errors?.[0];
    log(
      `  bomb  ${kind.kind.padEnd(20)} ${o.key.padEnd(32)} ${fmt.ms(exchange.ms).padStart(7)} ms  ${ok ? "ok" : "FAIL"}  ${fmt.int(kind.body.length)} B — ${kind.what}; "${detail?.message.slice(0, 80) ?? exchange.text.slice(0, 80)}"`,
    );
  }
  if (!precheckOk) throw new Error("a pre-check failed (see above)");
  log();

  // 5. Load -------------------------------------------------------------------------------------
  // JIT warm-up, not measured: the mix 300 times, 4 at a time, from 10 other addresses (30 each,
  // well within their budgets), and every bomb a few times, so the first baseline is not a cold one.
  const warmStarted = performance.now();
  let warmed = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (warmed < 300) {
        const n = warmed++;
        await post(agent, target, Buffer.from(mix[n % mix.length]!.body), `192.0.2.${100 + (n % 10)}`);
      }
    }),
  );
  for (let i = 0; i < 5 * kinds.length; i++) await post(agent, target, Buffer.from(kinds[i % kinds.length]!.body), bombAddress(100 + i));
  log(`JIT warm-up: 300 requests of the mix and ${5 * kinds.length} bombs in ${((performance.now() - warmStarted) / 1000).toFixed(1)} s`);

  const records: GoodRecord[] = [];
  const inFlightGood = new Set<Promise<void>>();
  let stopGood = false;
  let goodSkipped = 0;
  const goodLoop = pace(
    GOOD_RATE,
    Number.POSITIVE_INFINITY,
    (i, scheduledAt) => {
      const m = mix[i % mix.length]!;
      if (inFlightGood.size >= 64) {
        goodSkipped++;
        const exchange: Exchange = { status: 0, text: "", ms: 0, sentAt: scheduledAt, doneAt: scheduledAt, error: "not sent: 64 in flight" };
        records.push({ name: m.name, scheduledAt, exchange, ok: false, outcome: "not sent (64 already in flight)" });
        return;
      }
      const promise = post(agent, target, Buffer.from(m.body), GOOD_ADDRESS).then((exchange) => {
        const o = outcomeOf(exchange);
        records.push({ name: m.name, scheduledAt, exchange, ok: exchange.status === 200 && o.withData && !o.code, outcome: o.key });
      });
      inFlightGood.add(promise);
      void promise.finally(() => inFlightGood.delete(promise));
    },
    () => stopGood,
  );

  let pgBackends: () => Promise<number[]> = async () => [];
  let pgClient: pg.Client | undefined;
  if (served.database === "postgres") {
    pgClient = new pg.Client({ connectionString: SERVER_URL, application_name: "bench-abuse" });
    await pgClient.connect();
    pgBackends = async () =>
      (await pgClient!.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'bench-abuse'`, [DB_NAME])).rows.map(
        (r) => r.pid,
      );
  }
  const cpuSnapshot = async () => {
    const pids = await pgBackends().catch(() => [] as number[]);
    const pgMs = new Map(pids.map((pid) => [pid, processCpuMs(pid)]));
    const self = process.cpuUsage();
    return {
      server: processCpuMs(server?.pid),
      attacker: processCpuMs(attacker?.pid),
      self: (self.user + self.system) / 1000,
      pg: pgMs,
      pressure: cpuPressureUs(),
      at: performance.now(),
    };
  };
  const cpuDelta = (a: Awaited<ReturnType<typeof cpuSnapshot>>, b: Awaited<ReturnType<typeof cpuSnapshot>>) => {
    let pgMs = 0;
    for (const [pid, ms] of b.pg) if (Number.isFinite(ms)) pgMs += ms - (a.pg.get(pid) ?? ms);
    return {
      server: b.server - a.server,
      attacker: b.attacker - a.attacker,
      self: b.self - a.self,
      pg: pgMs,
      wall: b.at - a.at,
      pressure: (b.pressure - a.pressure) / 1000,
    };
  };

  const rssStart = rssMb(server.pid);
  log(`good client warm-up ${WARMUP} s …`);
  await sleep(WARMUP * 1000);
  const windows: Window[] = [];
  const attackReports: AttackReport[] = [];
  const loadStarted = performance.now();
  const measure = async (phase: Phase, run: number, extra: Partial<Window> = {}): Promise<Window> => {
    const before = await cpuSnapshot();
    const start = performance.now();
    await sleep(DURATION * 1000);
    const end = performance.now();
    const after = await cpuSnapshot();
    // The window's own requests finish before it is summed up (in-flight ones are not yet recorded).
    await Promise.race([Promise.all([...inFlightGood]), sleep(REQUEST_TIMEOUT_MS + 1000)]);
    const window: Window = { phase, run, start, end, cpu: cpuDelta(before, after), load1: loadavg()[0] ?? Number.NaN, rss: rssMb(server?.pid), ...extra };
    windows.push(window);
    return window;
  };
  /** An attack of WARMUP + DURATION s; the good client is measured over its last DURATION s. */
  const attackPhase = async (phase: Phase, run: number, floodRate: number, bombRate: number) => {
    const attackSeconds = WARMUP + DURATION + 0.5;
    const id = attackReports.length + 1;
    const report = attacker!.waitForJson<AttackReport>((v) => v.run === id, (attackSeconds + 30) * 1000, `the report of attack ${id}`);
    const attackStartedAt = performance.now();
    // Server CPU second by second (the timeline shows whether the server was saturated when).
    const serverCpuPerSecond: number[] = [];
    let lastCpu = processCpuMs(server?.pid);
    const sampler = setInterval(() => {
      const now = processCpuMs(server?.pid);
      serverCpuPerSecond.push(now - lastCpu);
      lastCpu = now;
    }, 1000);
    attacker!.child.stdin!.write(`${JSON.stringify({ cmd: "attack", run: id, seconds: attackSeconds, floodRate, bombRate })}\n`);
    attackReports.push(undefined as unknown as AttackReport); // reserves the id
    await sleep(WARMUP * 1000);
    const window = await measure(phase, run, { attackStartedAt });
    window.attack = await report;
    clearInterval(sampler);
    window.serverCpuPerSecond = serverCpuPerSecond;
    attackReports[id - 1] = window.attack;
    logWindow(records, window);
    await sleep(COOLDOWN * 1000);
  };
  for (let run = 1; run <= RUNS; run++) {
    logWindow(records, await measure("A", run)); // the good client alone
    await attackPhase("B", run, FLOOD_RATE, BOMB_RATE);
    if (BREAKDOWN) {
      await attackPhase("B flood only", run, FLOOD_RATE, 0);
      await attackPhase("B bombs only", run, 0, BOMB_RATE);
    }
  }
  stopGood = true;
  await goodLoop;
  await Promise.all([...inFlightGood]);
  agent.destroy();
  const rssEnd = rssMb(server.pid);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  await pgClient?.end().catch(() => undefined);

  // 6. Report ---------------------------------------------------------------------------------------
  const A = windows.filter((w) => w.phase === "A");
  const B = windows.filter((w) => w.phase === "B");
  const a = windowStats(records, A);
  const b = windowStats(records, B);
  const reportsOf = (ws: Window[]) => ws.map((w) => w.attack!).filter(Boolean);
  const bReports = reportsOf(B);
  const sum = (f: (r: AttackReport) => number, reports = bReports) => reports.reduce((s, r) => s + f(r), 0);
  const floodSent = sum((r) => r.flood.sent);
  const flood429 = sum((r) => r.flood.asExpected);
  const floodAdmitted = sum((r) => r.flood.withData);
  const bombTally = (f: (t: Tally) => number, reports = bReports) => sum((r) => Object.values(r.bombs).reduce((s, t) => s + f(t), 0), reports);
  const bombsSent = bombTally((t) => t.sent);
  const bombsRefused = bombTally((t) => t.asExpected);
  const bombsWithData = bombTally((t) => t.withData);
  const attackSecondsTotal = sum((r) => r.seconds);

  log();
  log(`per-kind bombs over the B attacks (${fmt.int(attackSecondsTotal)} s of attack; latency = how long the server took to refuse):`);
  log(
    table(
      ["bomb", "sent", "refused as expected", "expected", "2xx with data", "outcomes", "p50 ms", "p99 ms"],
      kinds.map((k) => {
        const ts = bReports.map((r) => r.bombs[k.kind]!);
        const outcomes = new Map<string, number>();
        for (const t of ts) for (const [key, n] of Object.entries(t.outcomes)) outcomes.set(key, (outcomes.get(key) ?? 0) + n);
        return [
          k.kind,
          fmt.int(ts.reduce((s, t) => s + t.sent, 0)),
          fmt.int(ts.reduce((s, t) => s + t.asExpected, 0)),
          `${k.expect.status} ${k.expect.code}`,
          fmt.int(ts.reduce((s, t) => s + t.withData, 0)),
          [...outcomes].map(([key, n]) => `${key} ×${n}`).join(", "),
          fmt.ms(median(ts.map((t) => t.p50))),
          fmt.ms(median(ts.map((t) => t.p99))),
        ];
      }),
      [false, true, true, false, true, false, true, true],
    ),
  );
  const floodOutcomes = new Map<string, number>();
  for (const r of bReports) for (const [key, n] of Object.entries(r.flood.outcomes)) floodOutcomes.set(key, (floodOutcomes.get(key) ?? 0) + n);
  log(
    `flood over the B attacks: sent ${fmt.int(floodSent)} (${fmt.rps(floodSent / attackSecondsTotal)} req/s; ${fmt.int(sum((r) => r.flood.skipped))} not sent at the in-flight cap); ` +
      `${[...floodOutcomes].map(([key, n]) => `${key} ×${fmt.int(n)}`).join(", ")}; ` +
      `admitted ${fmt.rps(floodAdmitted / attackSecondsTotal)} req/s (budget ${fmt.rps(sustained)} req/s + a full bucket of ${rl.capacity} points at the start of each attack); ` +
      `the 429s took p50 ${fmt.ms(median(bReports.map((r) => r.flood.p50)))} ms, p99 ${fmt.ms(median(bReports.map((r) => r.flood.p99)))} ms`,
  );
  const first = B[0];
  if (first?.attack && first.attackStartedAt !== undefined) {
    log();
    log(`timeline of the first attack (second since it started; the measured window is seconds ${WARMUP}–${WARMUP + DURATION - 1}):`);
    const t0 = first.attackStartedAt;
    const seconds = Math.max(
      Math.ceil(first.attack.seconds) + 1,
      first.attack.flood.timeline.length,
      ...Object.values(first.attack.bombs).map((t) => t.timeline.length),
    );
    const bombsAt = (s: number) => Object.values(first.attack!.bombs).reduce((sum, t) => sum + (t.timeline[s]?.[2] ?? 0), 0);
    log(
      table(
        ["s", "good due", "good ok", "good p50 ms", "good max ms", "flood sent", "flood 2xx", "flood 429", "bombs refused", "server CPU"],
        Array.from({ length: seconds }, (_, s) => {
          const sent = records.filter((r) => r.exchange.sentAt >= t0 + s * 1000 && r.exchange.sentAt < t0 + (s + 1) * 1000);
          const ms = sent
            .filter((r) => r.ok)
            .map((r) => r.exchange.ms)
            .sort((x, y) => x - y);
          const f = first.attack!.flood.timeline[s] ?? [0, 0, 0];
          const cpu = first.serverCpuPerSecond?.[s];
          return [
            String(s),
            String(sent.length),
            String(ms.length),
            fmt.ms(percentile(ms, 50)),
            fmt.ms(ms.at(-1) ?? Number.NaN),
            String(f[0]),
            String(f[1]),
            String(f[2]),
            String(bombsAt(s)),
            cpu === undefined ? "—" : fmt.pct(cpu / 1000),
          ];
        }),
        [true, true, true, true, true, true, true, true, true, true],
      ),
    );
    const goodMaxPerSecond = (w: Window) =>
      Array.from({ length: Math.ceil(w.attack!.seconds) }, (_, s) => {
        const ms = records
          .filter((r) => r.ok && r.exchange.sentAt >= w.attackStartedAt! + s * 1000 && r.exchange.sentAt < w.attackStartedAt! + (s + 1) * 1000)
          .map((r) => r.exchange.ms);
        return ms.length ? Math.round(Math.max(...ms)) : "—";
      });
    log("every attack, second by second from its start — good-client max latency (ms) | server CPU (% of a core):");
    windows
      .filter((w) => w.attack && w.attackStartedAt !== undefined)
      .forEach((w) => {
        log(
          `  run ${w.run} ${w.phase.padEnd(12)} ${goodMaxPerSecond(w).join(" ")} | ${(w.serverCpuPerSecond ?? []).map((ms) => Math.round(ms / 10)).join(" ")}`,
        );
      });
  }

  log();
  log("per window (good client; CPU as a share of one core over the window):");
  log(
    table(
      [
        "run",
        "phase",
        "req/s",
        "p50 ms",
        "p99 ms",
        "failures",
        "server CPU",
        "PostgreSQL CPU",
        "attacker CPU",
        "this process CPU",
        "CPU stall (PSI)",
        "loadavg",
        "server RSS MB",
      ],
      windows.map((w) => {
        const s = windowStats(records, [w]);
        const share = (ms: number) => fmt.pct(ms / w.cpu.wall);
        return [
          String(w.run),
          w.phase,
          fmt.rps(s.rps),
          fmt.ms(s.p50),
          fmt.ms(s.p99),
          String(Object.values(s.failures).reduce((x, y) => x + y, 0)),
          share(w.cpu.server),
          served.database === "postgres" ? share(w.cpu.pg) : "— (in server)",
          w.attack ? share(w.cpu.attacker) : "idle",
          share(w.cpu.self),
          share(w.cpu.pressure),
          w.load1.toFixed(1),
          w.rss.toFixed(0),
        ];
      }),
      [true, false, true, true, true, true, true, true, true, true, true, true, true],
    ),
  );
  const cpuShare = (ws: Window[], f: (w: Window) => number) => ws.reduce((s, w) => s + f(w), 0) / ws.reduce((s, w) => s + w.cpu.wall, 0);
  log("(CPU stall: share of the window during which some runnable task on this machine waited for a CPU — others' load shows here.)");
  const serverMsPerGood = A.reduce((s, w) => s + w.cpu.server, 0) / Math.max(1, a.ok);
  log(
    `server CPU per good request (A): ${fmt.ms(serverMsPerGood)} ms — one core serves at most ~${fmt.int(1000 / serverMsPerGood)} such requests/s; ` +
      `under attack it must also serve the flood's admitted ${fmt.rps(sustained)} req/s (plus its bucket of ${rl.capacity} points) and refuse the rest and the bombs`,
  );
  log(
    `server process CPU: A ${fmt.pct(cpuShare(A, (w) => w.cpu.server))} of a core, B ${fmt.pct(cpuShare(B, (w) => w.cpu.server))} ` +
      `(one Node process runs the gateway, the three subgraphs${served.database === "pglite" ? " and PGlite" : ""}: 100% is its ceiling); ` +
      `server RSS ${fmt.ms(rssStart)} → ${fmt.ms(rssEnd)} MB; good-client send lag p99 A ${fmt.ms(a.lagP99)} ms, B ${fmt.ms(b.lagP99)} ms; ` +
      `good requests not sent at the in-flight cap: ${goodSkipped}`,
  );
  const failuresOf = (s: WindowStats) =>
    Object.entries(s.failures)
      .map(([k, n]) => `${k} ×${n}`)
      .join(", ") || "none";
  log(`good-client failures: A ${failuresOf(a)}; B ${failuresOf(b)}`);
  log(
    `server log lines (warn and above): ${serverLogs.lines}${
      serverLogs.byMessage.size
        ? ` — ${[...serverLogs.byMessage]
            .sort((x, y) => y[1] - x[1])
            .slice(0, 5)
            .map(([k, n]) => `${k} ×${n}`)
            .join("; ")}`
        : ""
    }`,
  );

  log();
  log(
    `RESULTS — good client ${GOOD_RATE} req/s; under attack: flood ${FLOOD_RATE} req/s from one address, bombs ${BOMB_RATE} req/s from rotating addresses; ` +
      `${RUNS} × ${DURATION} s per phase, latencies pooled over the runs; ${availableParallelism()} CPUs shared`,
  );
  log(
    table(
      ["phase", "good-client req/s", "p50 ms", "p99 ms", "flood 429s", "bombs refused"],
      [
        ["A baseline", fmt.rps(a.rps), fmt.ms(a.p50), fmt.ms(a.p99), "—", "—"],
        [
          "B under attack",
          fmt.rps(b.rps),
          fmt.ms(b.p50),
          fmt.ms(b.p99),
          `${fmt.int(flood429)} / ${fmt.int(floodSent)}`,
          `${fmt.int(bombsRefused)} / ${fmt.int(bombsSent)}`,
        ],
        ...(["B flood only", "B bombs only"] as const)
          .filter(() => BREAKDOWN)
          .map((phase) => {
            const ws = windows.filter((w) => w.phase === phase);
            const s = windowStats(records, ws);
            const rs = reportsOf(ws);
            return [
              `(${phase})`,
              fmt.rps(s.rps),
              fmt.ms(s.p50),
              fmt.ms(s.p99),
              phase === "B flood only" ? `${fmt.int(sum((r) => r.flood.asExpected, rs))} / ${fmt.int(sum((r) => r.flood.sent, rs))}` : "—",
              phase === "B bombs only" ? `${fmt.int(bombTally((t) => t.asExpected, rs))} / ${fmt.int(bombTally((t) => t.sent, rs))}` : "—",
            ];
          }),
      ],
      [false, true, true, true, true, true],
    ),
  );
  const share = b.rps / a.rps;
  const factor = b.p99 / a.p99;
  const throughputOk = share >= TARGET_THROUGHPUT_SHARE;
  const p99Ok = factor <= TARGET_P99_FACTOR;
  const bombsOk = bombsWithData === 0 && bombsRefused === bombsSent;
  const unexpected = new Map<string, number>();
  for (const r of bReports) {
    for (const [kind, t] of Object.entries(r.bombs)) {
      const expected = kinds.find((k) => k.kind === kind)!.expect;
      for (const [key, n] of Object.entries(t.outcomes)) if (key !== `${expected.status} ${expected.code}`) unexpected.set(key, (unexpected.get(key) ?? 0) + n);
    }
  }
  log(
    `bombs answered 2xx with data: ${bombsWithData}; bombs not refused as expected: ${bombsSent - bombsRefused}` +
      `${unexpected.size ? ` (${[...unexpected].map(([k, n]) => `${k} ×${n}`).join(", ")})` : ""}  ${bombsOk ? "PASS" : "FAIL"}`,
  );
  log(
    `target "good client keeps ≥ ${TARGET_THROUGHPUT_SHARE * 100}% of its baseline throughput": ${fmt.rps(b.rps)} / ${fmt.rps(a.rps)} req/s = ${fmt.pct(share)}  ${throughputOk ? "PASS" : "FAIL"}`,
  );
  log(
    `target "good client p99 under attack ≤ ${TARGET_P99_FACTOR}× unloaded p99":       ${fmt.ms(b.p99)} / ${fmt.ms(a.p99)} ms = ${fmt.ratio(factor)}  ${p99Ok ? "PASS" : "FAIL"}`,
  );
  const halves = (ws: Window[], second: boolean) =>
    ws.map((w) => ({ ...w, start: second ? (w.start + w.end) / 2 : w.start, end: second ? w.end : (w.start + w.end) / 2 }));
  const bFirst = windowStats(records, halves(B, false));
  const bSecond = windowStats(records, halves(B, true));
  log(
    `(informational, not a target: B split in halves — first ${DURATION / 2} s p50 ${fmt.ms(bFirst.p50)} / p99 ${fmt.ms(bFirst.p99)} ms, ` +
      `last ${DURATION / 2} s p50 ${fmt.ms(bSecond.p50)} / p99 ${fmt.ms(bSecond.p99)} ms; the timeline above shows when the flood's admitted burst had drained)`,
  );
  log(
    `load phase ${loadSeconds.toFixed(0)} s, whole run ${((performance.now() - started) / 1000).toFixed(0)} s; loadavg now ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  return throughputOk && p99Ok && bombsOk;
}

function logWindow(records: GoodRecord[], w: Window): void {
  const s = windowStats(records, [w]);
  const attack = w.attack
    ? `  | flood ${w.attack.flood.sent} sent, ${w.attack.flood.asExpected} × 429, ${w.attack.flood.withData} admitted; bombs ${Object.values(w.attack.bombs).reduce((x, t) => x + t.asExpected, 0)}/${Object.values(w.attack.bombs).reduce((x, t) => x + t.sent, 0)} refused`
    : "";
  log(
    `  run ${w.run} ${w.phase}: good ${fmt.rps(s.rps).padStart(5)} req/s  p50 ${fmt.ms(s.p50).padStart(6)} ms  p99 ${fmt.ms(s.p99).padStart(6)} ms  server CPU ${fmt.pct(w.cpu.server / w.cpu.wall).padStart(6)}  loadavg ${w.load1.toFixed(1)}${attack}`,
  );
}

// ---------------------------------------------------------------------------------------------

if (args.role === "attacker") {
  await attackerMain();
} else {
  await runBenchmark(main, cleanup, { watchdogMs: WATCHDOG_MS });
}
