// Helpers shared by the GraphQL benchmarks (bench/graphql.ts, bench/scale.ts): formatting, the
// stack in a child process (bench/serve.ts, started by test/spawn.ts), CPU accounting from /proc,
// and capturing the SQL a resolver really sends through Prisma. Databases: test/db.ts.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { GATEWAY_SECTIONS, gatewaySettings, type GatewaySettings } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";
import { cursorKeyFrom } from "../subgraphs/history/cursor.ts";

/** The benchmarks' variables (BENCH_*: servers, log level, children's settings), parsed once. */
export const benchConfig = loadConfig(["bench"]);

export function log(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function safeUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString("en-US"),
  rps: (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—"),
  ms: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—"),
  s: (ms: number) => `${(ms / 1000).toFixed(1)} s`,
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : "—"),
};

export function table(header: string[], rows: string[][], alignRight: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (alignRight[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${"-".repeat(w + 1)}:` : `${"-".repeat(w + 2)}`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

export interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export async function post(url: string, body: string, timeoutMs = 30_000): Promise<{ status: number; text: string; json: GraphQLBody }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let json: GraphQLBody;
  try {
    json = JSON.parse(text) as GraphQLBody;
  } catch {
    json = { errors: [{ message: `not JSON: ${text.slice(0, 200)}` }] };
  }
  return { status: response.status, text, json };
}

export function requestBody(query: string, variables: Record<string, unknown>): string {
  return JSON.stringify({ query, variables });
}

// CPU accounting from /proc (Linux; elsewhere the CPU figures show "—").
const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process in ms, or undefined when it cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields && ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** The fields of /proc/pid/stat after the command name (fields[0] is the state, [1] the parent), or undefined once the process is gone. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * CPU milliseconds of `root` and everything under it: its own, its reaped children's (cutime and
 * cstime of /proc/pid/stat) and its live descendants'. For a PostgreSQL server (the postmaster):
 * every backend and parallel worker, ended or running.
 */
export function processTreeCpuMs(root: number): number | undefined {
  const stats = new Map<number, { ppid: number; ticks: number; reaped: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    // A process that ended while the list was read has its time in its parent's reaped share.
    const fields = statFields(entry);
    if (fields)
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) });
  }
  const top = stats.get(root);
  if (!top) return undefined;
  let ticks = top.ticks + top.reaped;
  const below = [root];
  for (let pid = below.pop(); pid !== undefined; pid = below.pop()) {
    for (const [child, stat] of stats) {
      if (stat.ppid !== pid) continue;
      ticks += stat.ticks;
      below.push(child);
    }
  }
  return (ticks * 1000) / CLK_TCK;
}

/** The parent process of `pid` (for a PostgreSQL backend: its server's postmaster), or undefined. */
export function parentPid(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields && Number(fields[1]);
}

/** The kernel's count of connections dropped because a listening socket's accept queue was full (TcpExt ListenOverflows), or undefined. */
export function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
    const names = lines.find((l) => l.startsWith("TcpExt:"))?.split(" ");
    const values = lines.filter((l) => l.startsWith("TcpExt:"))[1]?.split(" ");
    const at = names?.indexOf("ListenOverflows") ?? -1;
    return at > 0 && values ? Number(values[at]) : undefined;
  } catch {
    return undefined;
  }
}

/** Microseconds some runnable task on the machine waited for a CPU (`/proc/pressure/cpu` "some" total), or undefined. */
export function cpuStallUs(): number | undefined {
  try {
    const some = readFileSync("/proc/pressure/cpu", "utf8")
      .split("\n")
      .find((l) => l.startsWith("some"));
    const total = some?.match(/total=(\d+)/)?.[1];
    return total === undefined ? undefined : Number(total);
  } catch {
    return undefined;
  }
}

export interface Served {
  child: Spawned;
  gateway: string;
  subgraphs: Record<string, string>;
}

/** Starts bench/serve.ts over `databaseUrl` in a child process and waits for its URLs (60 s at most); `env`: more of its BENCH_* settings. */
export async function serveStack(databaseUrl: string, nodeFlags: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child = spawnTypeScript(fileURLToPath(new URL("./serve.ts", import.meta.url)), {
    env: { ...env, BENCH_SERVE_DATABASE_URL: databaseUrl },
    nodeFlags,
    stderr: "inherit",
  });
  try {
    const urls = await child.waitForJson<Omit<Served, "child">>((line) => Boolean(line.gateway && line.subgraphs), 60_000, "its URLs");
    return { child, gateway: urls.gateway, subgraphs: urls.subgraphs };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** SIGTERM by pid, SIGKILL after 10 s. */
export function stopChild(child: Spawned): Promise<void> {
  return child.stop({ graceMs: 10_000 });
}

export interface CapturedQuery {
  sql: string;
  params: unknown[];
}

/**
 * Runs `fn` with a Prisma client that records every statement it sends to `url` (one connection),
 * and returns the statements. This is how the benchmarks EXPLAIN what a resolver really sends.
 */
export async function captureSql(url: string, fn: (db: Database) => Promise<unknown>): Promise<CapturedQuery[]> {
  const captured: CapturedQuery[] = [];
  // A whole Database seam: Prisma's statements and the driver's (Database.read) are both recorded.
  const db = await openDatabase({
    url,
    poolSize: 1,
    onQuery(sql, params) {
      let values: unknown[] = [];
      try {
        values = JSON.parse(params) as unknown[];
      } catch {
        // keep none
      }
      captured.push({ sql, params: values });
    },
  });
  try {
    await fn(db);
    return captured;
  } finally {
    await db.close();
  }
}

/**
 * The whole stack in this process over `db`, as production runs it (no stack traces), on a free
 * loopback port: the configuration's defaults mapped as every process maps them (bin/wiring.ts),
 * without a per-client rate limit, in-flight cap or response cache unless `settings` give them.
 */
/** One cursor key for every process of a benchmark, so the floor and bench/scale.ts write the cursors the servers do. */
export const BENCH_CURSOR_KEY = cursorKeyFrom("bench");

export function startBenchStack(db: Database, logger: Logger, settings: Partial<GatewaySettings> = {}): Promise<RunningStack> {
  const config = loadConfig(GATEWAY_SECTIONS, {
    NODE_ENV: "production",
    SUPERGRAPH_PATH: fileURLToPath(new URL("../supergraph.graphql", import.meta.url)),
    RATE_LIMIT_POINTS: "0",
    // One load generator is one client address: a cap on its requests in flight would refuse the load itself.
    RATE_LIMIT_MAX_IN_FLIGHT: "0",
    RESPONSE_CACHE: "off",
  });
  return startStack({
    deps: { db, logger, networks: new NetworkDirectory(db), production: true, cursorKey: BENCH_CURSOR_KEY },
    host: "127.0.0.1",
    port: 0,
    gateway: { ...gatewaySettings(config, { logger }), ...settings },
  });
}

// The two benchmarked queries (issue 24), as a gateway is asked them: bench/gateways.ts compares
// servers on them and bench/capacity.ts sizes the deployment on the same work. The floors
// (bench/floor*.ts) tell them apart by these operation names.
export const BET_RESULTS = `query BenchBetResults($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) { betId result { outcome won payout proof { piA piB piC publicSignals verified } } }
}`;
/** The wallet page: a player's bets, 50 a page, with network, result and proof. */
export const PLAYER_BETS = `query BenchPlayerBets($wallet: Address!, $first: Int!) {
  playerBets(wallet: $wallet, first: $first) {
    totalCount
    nodes { chainId betId player stake game status placedBlock network { chainId name confirmations } result { outcome won payout proof { piA publicSignals verified } } }
    pageInfo { hasNextPage endCursor }
  }
}`;
