// Abuse benchmark (issue 21): do honest clients keep their service while nine kinds of attacker
// hit the service at once? Loopback only, bounded in time, every child stopped by its pid.
//
//   npx tsx bench/abuse.ts [--bets 1000000] [--duration 20] [--warmup 5] [--drop]
//
// The production topology as separate processes over one PostgreSQL database of `--bets` bets
// (bench/scale-data.ts, kept as bench_abuse_<bets> and reused while its parameters match): the three
// subgraphs (bin/subgraph.ts) and the gateway (bin/gateway.ts) with the production defaults
// (NODE_ENV=production: points budget, expensive lane, write deadlines, cache bounds), a realtime
// node and a publisher (bin/realtime.ts, bin/publisher.ts) on the Redis adapter, two private
// redis-servers — the limiter's and admission's (noeviction) and the response cache's (64 MB,
// allkeys-lru, RESPONSE_CACHE_REDIS_URL) — behind nginx with the shipped deploy/nginx.conf and
// TRUST_PROXY_HOPS=1 (--front none: no proxy, TRUST_PROXY_HOPS=0); each client is its own
// 127.0.0.x address. No indexer: this process writes outbox rows through core/outbox.ts at a fixed
// rate so the honest sockets have updates to count. The honest clients run here (bench/abuse-
// honest.ts); the attackers run in three children of this file (`--role attacker`,
// bench/abuse-attacks.ts). Phase A: honest traffic alone; phase B: the same beside every attacker.
// How to read the output: bench/README.md.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { loadavg, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { openDatabase, type Database } from "../core/db.ts";
import { LISTEN_SOCKETS, reusePortSupported } from "../core/http.ts";
import { Outbox } from "../core/outbox.ts";
import { REALTIME_PATH } from "../realtime/events.ts";
import { databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { testUpdateRow } from "../test/outbox.ts";
import { NGINX, startNginx, type RunningNginx } from "../test/nginx.ts";
import { freePort } from "../test/private-postgres.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { startCluster, type Cluster } from "../test/realtime.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";
import { ATTACK_KINDS, REPORT_GRACE_S, type AttackerConfig, type AttackerReport, attackerMain, type AttackFixtures, type AttackKind } from "./abuse-attacks.ts";
import { HonestClients, HONEST, type Phase } from "./abuse-honest.ts";
import { arrivals, gauge, histogramBetween, honestBreakdown, loopDelay } from "./abuse-breakdown.ts";
import { printReport, type Sample } from "./abuse-report.ts";
import { benchConfig, cpuStallUs, listenOverflows, log, parentPid, processCpuMs, processTreeCpuMs } from "./common.ts";
import { runBenchmark } from "./load.ts";
import { DEFAULT_PENDING_TAIL, generateScaleDataset, isGenerated, scaleWallet } from "./scale-data.ts";

const { values: args } = parseArgs({
  options: {
    role: { type: "string", default: "main" },
    bets: { type: "string", default: "1000000" },
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    drop: { type: "boolean", default: false },
    attacks: { type: "string", default: ATTACK_KINDS.join(",") },
    front: { type: "string", default: "nginx" },
    // The data set's database: bench_abuse_<bets> unless named (a helper sharing the server keeps its own).
    database: { type: "string" },
    // Off by default: each sample reads /proc synchronously (~5 ms every 100 ms on the honest clients' event loop).
    "surge-cpu": { type: "boolean", default: false },
  },
});
if (args.front !== "nginx" && args.front !== "none")
  throw new Error("--front is nginx (the shipped deploy/nginx.conf in front, as in production) or none (every client straight at the services)");
const FRONTED = args.front === "nginx";
const BETS = Number(args.bets);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
if (!(BETS >= 10_000 && DURATION >= 5 && WARMUP >= 1)) throw new Error("--bets ≥ 10000, --duration ≥ 5, --warmup ≥ 1");

const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const DB_NAME = args.database ?? `bench_abuse_${BETS}`;
const SCALE = { bets: BETS, pendingTail: DEFAULT_PENDING_TAIL };
/** Outbox updates written before the run: what a deep `sinceSeq` replays. */
const PREFILL_UPDATES = 20_000;
const OUTBOX_RATE = 5;
const CHAIN_ID = 31337;
/** How long a server or an attacker child may take to start: generous, a loaded machine's tsx start-up takes minutes. */
const STARTUP_MS = 180_000;
/** The attackers, three per child process. */
const ATTACKER_GROUPS: AttackKind[][] = [
  ["flood", "churn", "repeated-ids"],
  ["aggregates", "csv-flood", "slow-readers"],
  ["replays", "sockets", "spread"],
]
  .map((group) => group.filter((kind) => args.attacks.split(",").includes(kind)))
  .filter((group) => group.length > 0) as AttackKind[][];

/** How long, from the start of phase B, each process's CPU is sampled, and how often (issue 21: the honest tail comes from B's first seconds). */
const SURGE_MS = 3_000;
const SURGE_STEP_MS = 100;

/**
 * Each process's CPU over the first SURGE_MS of phase B, sampled every SURGE_STEP_MS: its share of
 * one core over the whole window, and in its busiest step (and when that was), as report lines.
 */
async function sampleSurge(read: () => Record<string, number>): Promise<string[]> {
  const t0 = performance.now();
  const samples: { at: number; cpu: Record<string, number> }[] = [{ at: 0, cpu: read() }];
  while (performance.now() - t0 < SURGE_MS) {
    await new Promise((resolve) => setTimeout(resolve, SURGE_STEP_MS));
    samples.push({ at: performance.now() - t0, cpu: read() });
  }
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const lines = [`CPU over the first ${SURGE_MS / 1000} s of B (share of one core; busiest ${SURGE_STEP_MS} ms step and when):`];
  for (const name of Object.keys(first.cpu)) {
    let peak = 0;
    let peakAt = 0;
    for (let i = 1; i < samples.length; i++) {
      const share = (samples[i]!.cpu[name]! - samples[i - 1]!.cpu[name]!) / (samples[i]!.at - samples[i - 1]!.at);
      if (share > peak) [peak, peakAt] = [share, samples[i]!.at];
    }
    const whole = (last.cpu[name]! - first.cpu[name]!) / last.at;
    lines.push(
      `  ${name.padEnd(48)} ${(whole * 100).toFixed(0).padStart(4)}%   peak ${(peak * 100).toFixed(0).padStart(4)}% at +${(peakAt / 1000).toFixed(1)} s`,
    );
  }
  return lines;
}

const children: Spawned[] = [];
const redises: PrivateRedis[] = [];
let cluster: Cluster | undefined;
let db: Database | undefined;
let proxy: RunningNginx | undefined;

async function cleanup(): Promise<void> {
  for (const child of children) child.child.stdin?.end();
  await proxy?.stop();
  await Promise.all(children.map((child) => child.stop({ graceMs: 5_000 })));
  await cluster?.stop();
  await db?.close().catch(() => undefined);
  await Promise.all(redises.map((r) => r.stop()));
  if (args.drop) await dropPostgresDatabase(DB_NAME, SERVER_URL).catch(() => undefined);
}

/** Every 127.0.0.2–254 must be bindable on loopback (Linux routes all of 127/8 there). */
async function checkLoopback(): Promise<void> {
  for (let i = 2; i <= 254; i++) {
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once("error", (error) => reject(new Error(`127.0.0.${i} is not usable on loopback: ${error.message}`)));
      server.listen(0, `127.0.0.${i}`, () => server.close(() => resolve()));
    });
  }
}

async function waitHttp(url: string, what: string, child: Spawned): Promise<void> {
  const deadline = performance.now() + STARTUP_MS;
  for (;;) {
    if (!child.running()) throw new Error(`${what} exited: ${child.stderr().slice(-2000)}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      if (performance.now() > deadline) throw new Error(`${what} not listening after ${STARTUP_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Connections the kernel has completed for the sockets listening on loopback `port` that their
 * process has not accepted yet (/proc/net/tcp: state 0A, rx_queue), all of them together. Node
 * accepts one per listening socket per event-loop turn, so a busy gateway's queue is where a burst
 * of new connections (nginx opening one per request past its idle ones) waits before it is read.
 */
function acceptQueue(procNetTcp: string, port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let waiting = 0;
  for (const m of procNetTcp.matchAll(new RegExp(`^\\s*\\d+: ${local} [0-9A-F]+:[0-9A-F]+ 0A [0-9A-F]+:([0-9A-F]+)`, "gm")))
    waiting += Number.parseInt(m[1]!, 16);
  return waiting;
}

/** A crowd wallet of the scale data set: scaleWallet(-k - 1) spells the generator's wallet k ≥ 0. */
const crowdWallet = (k: number) => scaleWallet(-k - 1);

async function main(): Promise<boolean> {
  const started = performance.now();
  log(
    `abuse benchmark (issue 21): ${BETS.toLocaleString("en-US")} bets, A ${DURATION} s alone, B ${DURATION} s under attack; Node ${process.version} (servers listen on ${reusePortSupported ? LISTEN_SOCKETS : 1} socket(s): core/http.ts); loadavg ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  await checkLoopback();
  log("loopback: 127.0.0.2–127.0.0.254 all bindable");

  // 1. Data --------------------------------------------------------------------------------------
  if (await isGenerated(SERVER_URL, DB_NAME, SCALE)) log(`database ${DB_NAME}: reused (generated with these parameters)`);
  else {
    log(`database ${DB_NAME}: generating ${BETS.toLocaleString("en-US")} bets (bench/scale-data.ts)`);
    const t = await generateScaleDataset(SERVER_URL, DB_NAME, SCALE, (line) => log(line));
    log(`  generated in ${((t.loadMs + t.indexMs + t.vacuumMs) / 1000).toFixed(0)} s`);
  }
  const url = databaseUrl(DB_NAME, SERVER_URL);
  db = await openDatabase({ url, poolSize: 4 });
  const outbox = new Outbox(db);
  const [counted] = await db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM "Bet"`;
  const settled = (
    await db.prisma.$queryRaw<
      { betId: string }[]
    >`SELECT "betId"::text AS "betId" FROM "Bet" WHERE "chainId" = ${CHAIN_ID} AND status = 'SETTLED' ORDER BY "placedAt" LIMIT 3000`
  ).map((r) => ({ chainId: CHAIN_ID, betId: r.betId }));

  // 2. Outbox: a deep backlog for the replays, then a fixed rate during the run -------------------
  await outbox.clear();
  // Every other update the honest wallet socket's; a quarter the whale's (what the replay attacker
  // replays: a wallet's deep history, so that the replay price is what refuses it); the rest a crowd's.
  const player = (i: number) => (i % 2 === 0 ? HONEST.wallet : i % 4 === 1 ? scaleWallet(0) : crowdWallet(1000 + (i % 7)));
  let betId = 2_000_000_000;
  for (let i = 0; i < PREFILL_UPDATES; i += 500) {
    await outbox.append(
      Array.from({ length: 500 }, (_, k) => testUpdateRow({ chainId: CHAIN_ID, betId: String(betId++), player: player(i + k), type: "SETTLED" })),
    );
  }
  log(`outbox: ${PREFILL_UPDATES} updates written for the deep replays`);

  // 3. Servers -----------------------------------------------------------------------------------
  const limiterRedis = await createPrivateRedis({ args: ["--maxmemory-policy", "noeviction"] });
  redises.push(limiterRedis);
  const cacheRedis = await createPrivateRedis({ args: ["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"] });
  redises.push(cacheRedis);
  const common = {
    NODE_ENV: "production",
    DATABASE_URL: url,
    CURSOR_SECRET: "bench-abuse-cursor-secret-of-this-run",
    TRUST_PROXY_HOPS: FRONTED ? "1" : "0",
    LOG_LEVEL: benchConfig.BENCH_LOG_LEVEL ?? "warn",
    HOST: "127.0.0.1",
    APOLLO_TELEMETRY_DISABLED: "true",
  };
  const subgraphUrls: Record<string, string> = {};
  const subgraphPids: Record<string, number> = {};
  for (const name of ["networks", "results", "history"]) {
    const port = await freePort();
    const child = spawnTypeScript(fileURLToPath(new URL("../bin/subgraph.ts", import.meta.url)), { args: [name], env: { ...common, PORT: String(port) } });
    children.push(child);
    subgraphUrls[name] = `http://127.0.0.1:${port}`;
    subgraphPids[name] = child.pid;
    await waitHttp(`${subgraphUrls[name]}/metrics`, `subgraph ${name}`, child);
  }
  const gatewayPort = await freePort();
  const gatewayChild = spawnTypeScript(fileURLToPath(new URL("../bin/gateway.ts", import.meta.url)), {
    env: {
      ...common,
      PORT: String(gatewayPort),
      NETWORKS_SUBGRAPH_URL: `${subgraphUrls.networks}/graphql`,
      RESULTS_SUBGRAPH_URL: `${subgraphUrls.results}/graphql`,
      HISTORY_SUBGRAPH_URL: `${subgraphUrls.history}/graphql`,
      REDIS_URL: limiterRedis.url,
      RESPONSE_CACHE_REDIS_URL: cacheRedis.url,
    },
  });
  children.push(gatewayChild);
  const gateway = `http://127.0.0.1:${gatewayPort}`;
  await waitHttp(`${gateway}/metrics`, "gateway", gatewayChild);
  cluster = await startCluster({
    databaseUrl: url,
    redisUrl: limiterRedis.url,
    prefix: "bench-abuse:",
    nodes: 1,
    publishers: 1,
    // Behind nginx as in docker-compose.yml: the client address from X-Forwarded-For, the path nginx routes.
    env: FRONTED
      ? { NODE_ENV: "production", TRUST_PROXY_HOPS: "1", REALTIME_PATH: REALTIME_PATH.gateway, REALTIME_POLL_INTERVAL_MS: "200" }
      : { NODE_ENV: "production", TRUST_PROXY_HOPS: "0", REALTIME_POLL_INTERVAL_MS: "200" },
    readyTimeoutMs: STARTUP_MS,
  });
  const node = cluster.nodes[0]!;
  const realtimePath = FRONTED ? REALTIME_PATH.gateway : REALTIME_PATH.dedicated;
  log(
    `servers: gateway ${gateway}, subgraphs ${Object.values(subgraphUrls).join(" ")}, realtime ${node.url}${realtimePath}, redis limiter ${limiterRedis.url}, cache ${cacheRedis.url}`,
  );
  // What every client talks to: nginx with deploy/nginx.conf as shipped (its two upstreams of each kind
  // both this one gateway and this one node), or the services themselves (--front none).
  if (FRONTED) {
    if (!existsSync(NGINX)) throw new Error(`--front nginx needs ${NGINX} (apt-get install -y nginx-light), or run with --front none`);
    const nodePort = Number(new URL(node.url).port);
    proxy = await startNginx({ gatewayPorts: [gatewayPort, gatewayPort], realtimePorts: [nodePort, nodePort] }, { workerConnections: 16_384 });
    log(`front: nginx ${proxy.url} (deploy/nginx.conf), TRUST_PROXY_HOPS=1 on the gateway and the realtime node`);
  } else log("front: none — every client connects to the gateway and the realtime node directly (TRUST_PROXY_HOPS=0)");
  const entry = { gateway: proxy?.url ?? gateway, realtime: proxy?.url ?? node.url };

  // 4. Attackers (children) and honest clients (here) -------------------------------------------
  const [oldest] = await db.prisma.$queryRaw<{ head: bigint }[]>`SELECT min(seq) AS head FROM "BetUpdate"`;
  const fixtures: AttackFixtures = { whale: scaleWallet(0), settled, deepSinceSeq: String(oldest?.head ?? 0n) };
  const attackers = ATTACKER_GROUPS.map((kinds) => {
    const config: AttackerConfig = { gateway: entry.gateway, realtime: entry.realtime, realtimePath, kinds, fixtures };
    const child = spawnTypeScript(fileURLToPath(import.meta.url), {
      args: ["--role", "attacker"],
      env: { BENCH_ABUSE_ATTACKER: JSON.stringify(config) },
      stdin: "pipe",
    });
    children.push(child);
    return child;
  });
  await Promise.all(attackers.map((a) => a.waitForJson((line) => line.ready === true, STARTUP_MS, "attacker ready")));

  const honest = new HonestClients({
    gateway: entry.gateway,
    realtime: entry.realtime,
    realtimePath,
    wallets: Array.from({ length: 40 }, (_, k) => crowdWallet(20 + k)),
    settled: settled.slice(0, 1000),
    csvWallet: crowdWallet(200),
  });
  const checks = await honest.precheck();
  for (const line of checks.lines) log(`  ${line}`);
  if (!checks.ok) throw new Error("an honest request failed its pre-check");
  await honest.connectSockets();

  // 5. Samplers ----------------------------------------------------------------------------------
  const cacheClient = new Redis(cacheRedis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  const samples: Sample[] = [];
  let phase: Phase | "warmup" | "drain" = "warmup";
  const metric = (text: string, name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, "gm"))].reduce((s, m) => s + Number(m[1]), 0);
  const sampler = setInterval(() => {
    const at = phase;
    void Promise.all([
      fetch(`${subgraphUrls.history}/metrics`).then((r) => r.text()),
      fetch(`${subgraphUrls.results}/metrics`).then((r) => r.text()),
      cacheClient.info("memory"),
      readFile(`/proc/${node.pid}/status`, "utf8"),
      readFile("/proc/net/sockstat", "utf8").catch(() => ""),
      readFile("/proc/net/tcp", "utf8").catch(() => ""),
    ]).then(
      ([history, results, memory, status, sockstat, tcp]) =>
        samples.push({
          phase: at,
          poolWaiting: metric(history, "db_pool_waiting"),
          resultsPoolWaiting: metric(results, "db_pool_waiting"),
          laneWaiting: metric(history, "expensive_lane_waiting"),
          realtimeRssMb: Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024,
          cacheUsed: Number(/used_memory:(\d+)/.exec(memory)?.[1] ?? Number.NaN),
          cacheMax: Number(/maxmemory:(\d+)/.exec(memory)?.[1] ?? Number.NaN),
          tcpMemPages: Number(/^TCP:.* mem (\d+)/m.exec(sockstat)?.[1] ?? Number.NaN),
          gatewayAcceptQueue: acceptQueue(tcp, gatewayPort),
          historyAcceptQueue: acceptQueue(tcp, Number(new URL(subgraphUrls.history!).port)),
          resultsAcceptQueue: acceptQueue(tcp, Number(new URL(subgraphUrls.results!).port)),
        }),
      () => undefined,
    );
  }, 250);
  // PostgreSQL's side: the busiest moment of B (statements running or waiting, by client).
  let busiest: { active: number; lines: string[] } = { active: -1, lines: [] };
  const activity = setInterval(() => {
    if (phase !== "B" || !db) return;
    void db.prisma.$queryRaw<{ app: string; state: string; wait: string | null; n: bigint; longest: number; query: string }[]>`
      SELECT application_name AS app, state, wait_event_type || ':' || wait_event AS wait, count(*) AS n,
             max(extract(epoch FROM now() - query_start))::float8 AS longest, min(left(regexp_replace(query, '\s+', ' ', 'g'), 70)) AS query
      FROM pg_stat_activity WHERE datname = ${DB_NAME} AND state <> 'idle' AND pid <> pg_backend_pid()
      GROUP BY 1, 2, 3`.then(
      (rows) => {
        const active = rows.reduce((sum, row) => sum + Number(row.n), 0);
        if (active > busiest.active)
          busiest = {
            active,
            lines: rows.map((row) => `${row.n} × ${row.app || "?"} ${row.state} ${row.wait ?? "on CPU"} (longest ${row.longest.toFixed(1)} s): ${row.query}`),
          };
      },
      () => undefined,
    );
  }, 1000);
  // The counters of each phase's edges, from the servers' scrapes (`texts` below) and the realtime node's.
  const scrape = async (servers: Record<string, string>) => {
    const g = servers.gateway!;
    const h = servers.history!;
    const r = await fetch(`${node.url}/metrics`).then(
      (res) => res.text(),
      () => "",
    );
    return {
      slowReaderCuts: metric(g, "http_slow_reader_disconnects_total"),
      laneRefused: metric(h, "expensive_lane_refused_total"),
      admissionRefusals: metric(r, "realtime_admission_refusals_total"),
      replayRefusals: metric(r, "realtime_replay_refusals_total"),
      replayStalled: metric(r, "realtime_replay_stalled_disconnects_total"),
      firehoseRefusals: metric(r, "realtime_firehose_refusals_total"),
      inFlightRefusals: metric(g, "gateway_refusals_total"),
    };
  };
  // Raw scrapes of the gateway and the subgraphs at each phase's start and end: their latency histograms and loop delay (abuse-breakdown.ts).
  const metricServers = { gateway, ...subgraphUrls };
  const texts = async () =>
    Object.fromEntries(
      await Promise.all(
        Object.entries(metricServers).map(
          async ([k, u]) =>
            [
              k,
              await fetch(`${u}/metrics`).then(
                (res) => res.text(),
                () => "",
              ),
            ] as const,
        ),
      ),
    );
  const serverPids: Record<string, number> = {
    gateway: gatewayChild.pid,
    ...Object.fromEntries(Object.entries(subgraphPids).map(([k, v]) => [`subgraph ${k}`, v])),
    "realtime node": node.pid,
    publisher: cluster.publishers[0]!.pid,
    "redis limiter": limiterRedis.pid()!,
    "redis cache": cacheRedis.pid()!,
  };
  const proxyPid = proxy?.process.pid;
  // The server's postmaster, parent of every backend: the database's CPU, parallel workers included.
  const [{ pid: backend }] = await db!.prisma.$queryRaw<[{ pid: number }]>`SELECT pg_backend_pid() AS pid`;
  const postmaster = parentPid(backend);
  const cpuOf = () => ({
    ...Object.fromEntries(Object.entries(serverPids).map(([k, pid]) => [k, processCpuMs(pid) ?? Number.NaN])),
    "PostgreSQL (every backend and worker)": postmaster === undefined ? Number.NaN : (processTreeCpuMs(postmaster) ?? Number.NaN),
    ...(proxyPid === undefined ? {} : { "nginx (master and worker)": processTreeCpuMs(proxyPid) ?? Number.NaN }),
  });

  // 6. The run -----------------------------------------------------------------------------------
  const written: { seq: bigint; player: string; phase: string }[] = [];
  let writing = true;
  let writeFailures = 0;
  const writer = (async () => {
    const t0 = performance.now();
    for (let i = 0; writing; i++) {
      const due = t0 + (i * 1000) / OUTBOX_RATE;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      const p = player(i);
      try {
        const [seq] = await outbox.append([testUpdateRow({ chainId: CHAIN_ID, betId: String(betId++), player: p, type: i % 3 === 0 ? "PLACED" : "SETTLED" })]);
        written.push({ seq: seq!, player: p, phase });
      } catch (error) {
        // A loaded machine: the transaction may not start in time (Prisma's P2028). Nothing was
        // written then; the update is skipped, and said, rather than the run lost.
        writeFailures++;
        if (writeFailures === 1) log(`outbox writer: an append failed (${error instanceof Error ? error.message.slice(0, 120) : String(error)}); skipped`);
      }
    }
  })();
  honest.start();
  await new Promise((resolve) => setTimeout(resolve, WARMUP * 1000));

  const stall0 = cpuStallUs() ?? Number.NaN;
  const overflows0 = listenOverflows() ?? Number.NaN;
  const selfCpu0 = process.cpuUsage();
  const cpuA0 = cpuOf();
  // One scrape per server at each edge: a scrape resets prom-client's loop-delay histogram, so each covers the phase before it.
  const textsA0 = await texts();
  const metricsA0 = await scrape(textsA0);
  phase = "A";
  const windowA = honest.window("A");
  await new Promise((resolve) => setTimeout(resolve, DURATION * 1000));
  windowA.end();
  const cpuA1 = cpuOf();
  const selfCpuA = process.cpuUsage(selfCpu0);
  const textsB0 = await texts();
  const metricsB0 = await scrape(textsB0);
  const loadA = loadavg()[0]!;
  const stallA = cpuStallUs() ?? Number.NaN;
  const overflowsA = listenOverflows() ?? Number.NaN;

  phase = "B";
  const attackStarted = performance.now();
  // On the wall clock, to line B's "+s" up with other processes' logs (a server's GC or loop-delay trace).
  const attackStartedAt = new Date();
  const reports = attackers.map((a) =>
    a.waitForJson<AttackerReport>((line) => Array.isArray(line.kinds), (DURATION + REPORT_GRACE_S + 120) * 1000, "attack report"),
  );
  for (const a of attackers) a.child.stdin!.write(`${JSON.stringify({ cmd: "attack", seconds: DURATION })}\n`);
  const windowB = honest.window("B");
  const selfCpu1 = process.cpuUsage();
  const surge = !args["surge-cpu"]
    ? Promise.resolve([])
    : sampleSurge(() => ({
        ...cpuOf(),
        ...Object.fromEntries(attackers.map((a, i) => [`attackers ${ATTACKER_GROUPS[i]!.join(",")}`, processTreeCpuMs(a.child.pid!) ?? Number.NaN])),
        "load generator: honest clients (this process)": (process.cpuUsage().user + process.cpuUsage().system) / 1000,
      }));
  const newcomer = new Promise((resolve) => setTimeout(resolve, DURATION * 500)).then(() => honest.connectNewcomer());
  await new Promise((resolve) => setTimeout(resolve, DURATION * 1000));
  await newcomer;
  windowB.end();
  log(`phase B started at ${attackStartedAt.toISOString()} (${attackStartedAt.getTime()} ms since the epoch)`);
  const surgeLines = await surge;
  if (surgeLines.length > 0) log(surgeLines.join("\n"));
  const cpuB1 = cpuOf();
  const selfCpuB = process.cpuUsage(selfCpu1);
  const loadB = loadavg()[0]!;
  const stallB = cpuStallUs() ?? Number.NaN;
  const overflowsB = listenOverflows() ?? Number.NaN;
  phase = "drain";
  const attackerReports = await Promise.all(reports);
  const textsB1 = await texts();
  const metricsB1 = await scrape(textsB1);
  writing = false;
  await writer;
  await honest.stop();
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // the last updates reach the sockets
  clearInterval(sampler);
  clearInterval(activity);
  if (writeFailures > 0) log(`outbox writer: ${writeFailures} appends failed and were skipped (not counted as expected)`);
  // Where an honest request's time went: nginx's legs per request, then the servers' own view.
  const access = proxy?.accessLog() ?? [];
  for (const p of ["A", "B"] as const) for (const line of honestBreakdown(p, honest.answers(p), access)) log(line);
  for (const line of arrivals(access, attackStartedAt, 6)) log(line);
  for (const [p, before, after] of [
    ["A", textsA0, textsB0],
    ["B", textsB0, textsB1],
  ] as const) {
    log(`phase ${p}: servers' own latency (histogram bucket bounds, ms) and loop delay`);
    for (const op of ["HonestPlayerBets", "HonestBetResults", "HonestBets"]) {
      const sub = Object.keys(subgraphUrls)
        .map((k) => [k, histogramBetween(before[k]!, after[k]!, "graphql_request_duration_seconds", `operation="${op}`)] as const)
        .filter(([, v]) => v !== "none")
        .map(([k, v]) => `${k} ${v}`);
      log(
        `  ${op}: gateway (Apollo, after the door) ${histogramBetween(before.gateway!, after.gateway!, "graphql_request_duration_seconds", `operation="${op}"`)}; ${sub.join("; ")}`,
      );
    }
    for (const k of Object.keys(subgraphUrls))
      log(`  gateway → ${k} fetches, every client: ${histogramBetween(before.gateway!, after.gateway!, "subgraph_fetch_duration_seconds", `subgraph="${k}"`)}`);
    log(
      `  gateway loop delay ${loopDelay(after.gateway!)}; networks subgraph's ${loopDelay(after.networks!)}; gateway turns waited ${gauge(after.gateway!, "gateway_requests_waited_turn_total") - gauge(before.gateway!, "gateway_requests_waited_turn_total")}`,
    );
  }
  log(`PostgreSQL at the busiest moment of B: ${busiest.active} statements not idle`);
  for (const line of busiest.lines) log(`  ${line}`);
  cacheClient.disconnect();

  // 7. What the outbox holds vs what the honest sockets got ---------------------------------------
  const since = honest.socketsLiveFrom();
  const stored = await outbox.after(since, { limit: 1_000_000 });
  const phaseOf = new Map(written.map((w) => [String(w.seq), w.phase]));
  const sockets = honest.compareWithOutbox(
    stored.map((u) => ({ seq: BigInt(u.seq), player: u.player })),
    phaseOf,
  );

  return printReport({
    bets: Number(counted?.n ?? 0),
    duration: DURATION,
    honest: honest.results(),
    sockets,
    samples,
    attacks: attackerReports,
    attackGroups: ATTACKER_GROUPS,
    attackStarted,
    metrics: { a: [metricsA0, metricsB0], b: [metricsB0, metricsB1] },
    cpu: { a: [cpuA0, cpuA1], b: [cpuA1, cpuB1], seconds: DURATION },
    selfCpuMs: { a: (selfCpuA.user + selfCpuA.system) / 1000, b: (selfCpuB.user + selfCpuB.system) / 1000 },
    load: { a: loadA, b: loadB, now: loadavg() },
    cpuStall: { a: (stallA - stall0) / (DURATION * 1e6), b: (stallB - stallA) / (DURATION * 1e6) },
    listenOverflows: { a: overflowsA - overflows0, b: overflowsB - overflowsA },
    written: written.length,
    wallSeconds: (performance.now() - started) / 1000,
  });
}

if (args.role === "attacker") {
  // The attackers' own CPU is not the service's: at the lowest priority they take what the servers
  // and the honest clients leave (what they sent is in the report, and their CPU beside it).
  setPriority(19);
  await attackerMain(JSON.parse(benchConfig.BENCH_ABUSE_ATTACKER ?? "{}") as AttackerConfig);
} else {
  // Bounded: 20 minutes (start-up on a loaded machine takes several), plus 15 for generating the data set when it is not there yet.
  const watchdogMs = ((await isGenerated(SERVER_URL, DB_NAME, SCALE)) ? 20 : 35) * 60_000;
  await runBenchmark(main, cleanup, { watchdogMs });
}
