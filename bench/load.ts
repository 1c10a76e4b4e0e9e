// Load runs and server children for the HTTP benchmarks (bench/gateways.ts; the basics come from
// bench/common.ts): one autocannon run whose requests may rotate over several bodies, CPU per
// request charged to named groups of processes (server children, PostgreSQL backends) from /proc,
// TypeScript server scripts started (test/spawn.ts) and stopped by pid, and the summary of a
// `--cpu-prof` profile.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { Agent, request } from "node:http";
import { join, relative } from "node:path";
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";
import type pg from "pg";
import { log, median, percentile, post, processCpuMs, table, type GraphQLBody } from "./common.ts";

// ---------------------------------------------------------------------------------------------
// GraphQL over fetch (checks and probes; the load itself goes through autocannon)
// ---------------------------------------------------------------------------------------------

/** HTTP 200, no GraphQL errors, and whatever `check` asks of the data; a problem or null. */
export async function checkResponse(url: string, body: string, check: (json: GraphQLBody) => string | null): Promise<string | null> {
  const { status, json } = await post(url, body);
  if (status !== 200) return `HTTP ${status}`;
  if (json.errors?.length) return `GraphQL errors: ${json.errors.map((e) => `${String(e.extensions?.code ?? "")} ${e.message}`).join("; ")}`;
  return check(json);
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux; elsewhere the CPU columns show "—")
// ---------------------------------------------------------------------------------------------

/** CPU of one or more processes summed over a group: a server child, or a set of PostgreSQL backends. */
export type CpuGroups = Record<string, () => Promise<number[]> | number[]>;

interface CpuSnapshot {
  groups: Map<string, Map<number, number>>;
  self: NodeJS.CpuUsage;
  at: number;
}

async function cpuSnapshot(groups: CpuGroups): Promise<CpuSnapshot> {
  const snapshot = new Map<string, Map<number, number>>();
  for (const [name, pids] of Object.entries(groups)) {
    const byPid = new Map<number, number>();
    for (const pid of await Promise.resolve(pids()).catch(() => [])) {
      const ms = processCpuMs(pid);
      if (ms !== undefined) byPid.set(pid, ms);
    }
    snapshot.set(name, byPid);
  }
  return { groups: snapshot, self: process.cpuUsage(), at: performance.now() };
}

// ---------------------------------------------------------------------------------------------
// One autocannon run
// ---------------------------------------------------------------------------------------------

export interface LoadOptions {
  url: string;
  /** One body for every request, or several sent in rotation (one per request). */
  bodies: string[];
  connections: number;
  seconds: number;
  /** Whose CPU to charge per request, by column name. */
  cpu: CpuGroups;
}

export interface RunStats {
  rps: number;
  p50: number;
  p99: number;
  responses: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  graphqlErrors: number;
  /** CPU ms per completed request, by group (NaN when a group's processes could not be read). */
  cpuMs: Record<string, number>;
  /** CPU of this process (the load generator) as a share of one core. */
  benchCpuShare: number;
  /** 1-minute load average at the end of the run (foreign load shows here). */
  load1: number;
}

export function errorCount(s: RunStats): number {
  return s.non2xx + s.socketErrors + s.timeouts + s.graphqlErrors;
}

/** (max − min) / median of the runs' req/s. */
export function spreadOf(xs: number[]): number {
  return xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

/**
 * Waits until the given processes have gone (nearly) idle, at most `maxMs`: a server that fell
 * behind in one run (an open loop it could not keep up with leaves seconds of queued requests
 * that it goes on serving after the client gave up) must not be measured as the next run's noise.
 * Returns how long it waited and whether they settled.
 */
export async function settle(groups: CpuGroups, options: { maxMs?: number; idleShare?: number } = {}): Promise<{ waitedMs: number; settled: boolean }> {
  const maxMs = options.maxMs ?? 20_000;
  const idleShare = options.idleShare ?? 0.1; // of one core, over a 500 ms window
  const start = performance.now();
  const busyMs = async () => {
    const snapshot = await cpuSnapshot(groups);
    let ms = 0;
    for (const byPid of snapshot.groups.values()) for (const v of byPid.values()) ms += v;
    return ms;
  };
  let before = await busyMs();
  while (performance.now() - start < maxMs) {
    await sleep(500);
    const now = await busyMs();
    if (now - before <= 500 * idleShare) return { waitedMs: performance.now() - start, settled: true };
    before = now;
  }
  return { waitedMs: performance.now() - start, settled: false };
}

/** One run; latencies are kept per response (autocannon's own histogram rounds to whole ms). */
export async function runLoad(options: LoadOptions): Promise<RunStats> {
  const before = await cpuSnapshot(options.cpu);
  const stats = await autocannonRun(options);
  const after = await cpuSnapshot(options.cpu);
  return { ...stats, ...spentBetween(before, after, stats.responses) };
}

/** CPU ms per response by group between two snapshots, this process's share of a core, the load average. */
function spentBetween(before: CpuSnapshot, after: CpuSnapshot, responses: number): Pick<RunStats, "cpuMs" | "benchCpuShare" | "load1"> {
  const done = Math.max(1, responses);
  const cpuMs: Record<string, number> = {};
  for (const [name, pids] of after.groups) {
    const earlier = before.groups.get(name)!;
    let ms = 0;
    // A process that appeared during the run (a new pool connection) is charged from zero.
    for (const [pid, now] of pids) ms += now - (earlier.get(pid) ?? 0);
    cpuMs[name] = pids.size > 0 ? ms / done : Number.NaN;
  }
  const self = process.cpuUsage(before.self);
  return { cpuMs, benchCpuShare: (self.user + self.system) / 1000 / (after.at - before.at), load1: loadavg()[0] ?? Number.NaN };
}

type LoadStats = Omit<RunStats, "cpuMs" | "benchCpuShare" | "load1">;

function autocannonRun(options: LoadOptions): Promise<LoadStats> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const { bodies } = options;
    let next = 0;
    const instance = autocannon(
      {
        url: options.url,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: bodies[0],
        // Several bodies: each request takes the next one, so no two concurrent requests need be alike.
        requests: bodies.length > 1 ? [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }] : undefined,
        connections: options.connections,
        duration: options.seconds,
        pipelining: 1,
        timeout: 10,
        // Any GraphQL error in a 2xx body counts as a failed response ("mismatch").
        verifyBody: (body) => !body.includes('"errors"'),
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          rps: result.requests.average,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          responses: result["2xx"] + result.non2xx,
          non2xx: result.non2xx,
          socketErrors: result.errors - result.timeouts,
          timeouts: result.timeouts,
          graphqlErrors: result.mismatches,
        });
      },
    );
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Open loop: requests sent at a fixed rate whatever the answers do (latency where users feel it)
// ---------------------------------------------------------------------------------------------

export interface OpenLoopOptions {
  url: string;
  bodies: string[];
  /** Requests per second, evenly spaced. */
  rate: number;
  seconds: number;
  cpu: CpuGroups;
}

/**
 * Sends `rate × seconds` requests, the i-th at start + i / rate, each on a free keep-alive socket
 * (a new one when all are busy), and measures every latency from the moment the request was due,
 * not from when it left: a server that falls behind shows its queue in p99 instead of slowing the
 * sender down (no coordinated omission). Counts as errors what runLoad does (non-2xx, `"errors"` in
 * the body, socket errors, answers later than 10 s).
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<RunStats> {
  const target = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  const counts = { responses: 0, non2xx: 0, socketErrors: 0, timeouts: 0, graphqlErrors: 0 };
  const send = (body: string, due: number) =>
    new Promise<void>((resolve) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: { "content-type": "application/json" },
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            const ms = performance.now() - due;
            counts.responses++;
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) counts.non2xx++;
            else if (Buffer.concat(chunks).includes('"errors"')) counts.graphqlErrors++;
            else latencies.push(ms);
            resolve();
          });
        },
      );
      let timedOut = false;
      req.on("timeout", () => {
        timedOut = true;
        counts.timeouts++;
        req.destroy();
      });
      req.on("error", () => {
        if (!timedOut) counts.socketErrors++;
        resolve();
      });
      req.end(body);
    });
  const before = await cpuSnapshot(options.cpu);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(send(options.bodies[i % options.bodies.length]!, due));
  }
  await Promise.all(inFlight);
  const after = await cpuSnapshot(options.cpu);
  agent.destroy();
  const elapsedS = (after.at - before.at) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: counts.responses / elapsedS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ...counts,
    ...spentBetween(before, after, counts.responses),
  };
}

/**
 * Runs a benchmark's `main`, always followed by `cleanup` (also on SIGINT/SIGTERM, exit 130, and
 * after `watchdogMs`, exit 1), and exits 0 only when `main` reports every target met.
 */
export async function runBenchmark(main: () => Promise<boolean>, cleanup: () => Promise<void>, options: { watchdogMs?: number } = {}): Promise<never> {
  if (options.watchdogMs !== undefined) {
    const watchdog = setTimeout(() => {
      log(`\nwatchdog: still running after ${options.watchdogMs! / 1000} s, stopping`);
      void cleanup().finally(() => process.exit(1));
    }, options.watchdogMs);
    watchdog.unref();
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      log(`\n${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  let ok = false;
  try {
    ok = await main();
  } catch (error) {
    log(`\nbenchmark failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await cleanup();
  }
  process.exit(ok ? 0 : 1);
}

// ---------------------------------------------------------------------------------------------
// Server children
// ---------------------------------------------------------------------------------------------

export interface ServerOptions {
  env?: Record<string, string>;
  args?: string[];
  /** Extra Node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** How the child runs TypeScript (test/spawn.ts typescriptFlagsOf for another checkout); default this checkout's. */
  typescriptFlags?: readonly string[];
  /** What the child must report before it counts as ready. */
  ready: (line: Record<string, unknown>) => boolean;
  timeoutMs?: number;
}

/**
 * Starts a TypeScript server script (test/spawn.ts: one process, its pid the server's) and resolves
 * with the first JSON line on its stdout that `ready` accepts.
 */
export async function spawnServer<T extends Record<string, unknown>>(script: string, options: ServerOptions): Promise<{ child: Spawned; info: T }> {
  const child = spawnTypeScript(script, {
    args: options.args,
    env: options.env,
    nodeFlags: options.nodeFlags,
    typescriptFlags: options.typescriptFlags,
    stderr: "inherit",
  });
  try {
    return { child, info: await child.waitForJson<T>(options.ready, options.timeoutMs ?? 60_000, "ready") };
  } catch (error) {
    await child.stop({ graceMs: 10_000 });
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL backends
// ---------------------------------------------------------------------------------------------

/** Pids of the PostgreSQL backends connected to `database`, except those named `exceptApplication`. */
export function backendPids(client: pg.Client, database: string, exceptApplication: string): () => Promise<number[]> {
  return async () =>
    (
      await client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2`, [
        database,
        exceptApplication,
      ])
    ).rows.map((r) => r.pid);
}

// ---------------------------------------------------------------------------------------------
// --profile: where a server child spent its CPU
// ---------------------------------------------------------------------------------------------

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** node_modules/<package>, a project folder, or a V8 pseudo-frame. */
function bucketOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || "native"})`;
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = path.slice(nm + "node_modules/".length).split("/");
    return `node_modules/${parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  if (path.startsWith("node:")) return "node: (core)";
  const rel = relative(ROOT, path);
  return rel.startsWith("..")
    ? path
    : rel
        .split("/")
        .slice(0, rel.startsWith("subgraphs/") ? 2 : 1)
        .join("/");
}

/** Self time by package and by function of the newest profile in `dir` (or of `file`). */
export function printProfile(dir: string, title = "server CPU profile", file?: string): void {
  let files: string[] = [];
  try {
    files = file
      ? [file]
      : readdirSync(dir)
          .filter((f) => f.endsWith(".cpuprofile"))
          .map((f) => join(dir, f));
  } catch {
    // none
  }
  // Node writes one profile per thread (CPU.<date>.<time>.<pid>.<thread>.<seq>): tsx's loader
  // worker ends last, so the newest file is not the server's. Take the newest process's main thread.
  const pidOf = (f: string) => f.split(".").at(-4);
  const byAge = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const newest = byAge.filter((f) => pidOf(f) === pidOf(byAge[0] ?? "")).sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!newest) {
    log(`no CPU profile was written to ${dir}`);
    return;
  }
  const profile = JSON.parse(readFileSync(newest, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byBucket = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") return;
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const bucket = bucketOf(url, functionName);
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
    const fn = `${functionName || "(anonymous)"} ${bucket}${url ? `:${lineNumber + 1}` : ""}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  });
  const top = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => [k, `${(us / 1e6).toFixed(1)} s`, `${((100 * us) / total).toFixed(1)}%`]);
  log();
  log(`${title} (${relative(ROOT, newest)}; whole child lifetime, ${(total / 1e6).toFixed(1)} s busy), self time by package:`);
  log(table(["where", "self", "share"], top(byBucket, 15), [false, true, true]));
  log("top functions by self time:");
  log(table(["function", "self", "share"], top(byFunction, 15), [false, true, true]));
}
