// Capacity benchmark (issue 23, item 7): the per-core figures of the capacity plan
// (docs/guides/operating.md, "Capacity plan"; the model: bench/capacity-model.ts), measured through
// the real topology run as separate processes on loopback, printed beside the model's figures.
//
//   npx tsx bench/capacity.ts [--duration 12] [--warmup 4] [--connections 8] [--bets 5000]
//                             [--idle-sockets 2000] [--skip-replica]
//
// nginx with the shipped deploy/nginx.conf (as deploy/proxy.test.ts runs it; its per-address
// GraphQL rate raised, as all load comes from one address) → two bin/gateway.ts → three
// bin/subgraph.ts → PostgreSQL (BENCH_DATABASE_URL, database bench_capacity, the fixture set, kept
// and reused while its bet count matches); two bin/realtime.ts nodes and a bin/publisher.ts on a
// private Redis (also the gateways' limiter), a second private Redis for the response cache. CPU
// figures come from /proc (utime + stime deltas over a run, divided by the requests nginx answered):
// they survive a loaded machine far better than req/s, which is printed for reference only.
// Bounded by a watchdog (15 minutes); every child is stopped by its pid.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { openDatabase, type Database } from "../core/db.ts";
import { databaseUrl, recreatePostgresDatabase, withAdmin } from "../test/db.ts";
import { loopbackNginxConf, NGINX } from "../test/nginx.ts";
import { freePort } from "../test/private-postgres.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { startCluster, type Cluster } from "../test/realtime.ts";
import { spawnChild, spawnTypeScript, type Spawned } from "../test/spawn.ts";
import { ASSUMPTIONS, type Figures, MODEL, sizeDeployment, TOLERANCE } from "./capacity-model.ts";
import { measureRealtime, type RealtimeFigures } from "./capacity-realtime.ts";
import { measureReplicaLag, type ReplicaFigures } from "./capacity-replica.ts";
import { BET_RESULTS, benchConfig, fmt, log, PLAYER_BETS, processCpuMs, requestBody, table } from "./common.ts";
import { backendPids, checkResponse, type CpuGroups, errorCount, runBenchmark, runLoad, type RunStats } from "./load.ts";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "12" },
    warmup: { type: "string", default: "4" },
    connections: { type: "string", default: "8" },
    bets: { type: "string", default: "5000" },
    "idle-sockets": { type: "string", default: "2000" },
    "skip-replica": { type: "boolean", default: false },
  },
});
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const BETS = Number(args.bets);
const IDLE_SOCKETS = Number(args["idle-sockets"]);
const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const DB_NAME = "bench_capacity";
const APP = "bench-capacity";
const CHAIN_ID = 31337;
/** Sockets per client address: the realtime node's default admission bound (REALTIME_MAX_SOCKETS_PER_ADDRESS). */
const PER_ADDRESS = 20;
const SERVER_NODE_FLAGS = ["--max-semi-space-size=32"];

const children: Spawned[] = [];
const redises: PrivateRedis[] = [];
let cluster: Cluster | undefined;
let nginx: Spawned | undefined;
let nginxDir: string | undefined;
let db: Database | undefined;

async function cleanup(): Promise<void> {
  await nginx?.stop({ signal: "SIGQUIT", graceMs: 5_000 });
  await Promise.all(children.map((child) => child.stop({ graceMs: 5_000 })));
  await cluster?.stop();
  await db?.close().catch(() => undefined);
  await Promise.all(redises.map((r) => r.stop()));
  if (nginxDir) rmSync(nginxDir, { recursive: true, force: true });
}

async function waitHttp(url: string, what: string, child: Spawned): Promise<void> {
  const deadline = performance.now() + 240_000;
  for (;;) {
    if (!child.running()) throw new Error(`${what} exited: ${child.stderr().slice(-2000)}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      if (performance.now() > deadline) throw new Error(`${what} not listening after 240 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** A process and its children (nginx's workers), from /proc/<pid>/task/<pid>/children. */
function withChildren(pid: number): number[] {
  try {
    return [pid, ...readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)];
  } catch {
    return [pid];
  }
}

async function prepareDatabase(url: string): Promise<void> {
  const count = await withAdmin(
    async (c) => {
      if ((await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME])).rowCount !== 1) return -1;
      const client = new pg.Client({ connectionString: url, application_name: APP });
      await client.connect();
      try {
        return Number((await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "Bet"`)).rows[0]!.n);
      } catch {
        return -1;
      } finally {
        await client.end();
      }
    },
    SERVER_URL,
    APP,
  );
  if (count === BETS) {
    log(`database ${DB_NAME}: reused (${fmt.int(BETS)} bets)`);
    await (await openDatabase({ url, migrate: true })).close(); // newer migrations, if any
    return;
  }
  await recreatePostgresDatabase(DB_NAME, SERVER_URL);
  const started = performance.now();
  const seeding = await openDatabase({ url, migrate: true });
  const { seedFixtures } = await import("../fixtures/seed.ts");
  const { readProofCache } = await import("../fixtures/proof-cache.ts");
  await seedFixtures(seeding, { bets: BETS, wallets: 64, provenLimit: 0, outbox: false, proofCache: readProofCache() });
  await seeding.prisma.$executeRawUnsafe("ANALYZE");
  await seeding.close();
  log(`database ${DB_NAME}: seeded ${fmt.int(BETS)} bets in ${fmt.s(performance.now() - started)}`);
}

const NETWORK_CONFIGS = `query CapacityNetworkConfigs($chainId: ChainId) {
  networkConfigs(chainId: $chainId) { chainId name confirmations contracts { name address deployBlock } indexing { indexedBlock headBlock lagBlocks isReady } }
}`;

/** The mix, in rotation: 8 wallet pages, 8 betResults of 20–100 ids, 4 networkConfigs (2 : 2 : 1). */
async function mixBodies(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, application_name: APP });
  await client.connect();
  try {
    const settled = (
      await client.query<{ id: string }>(`SELECT "betId"::text AS id FROM "Bet" WHERE "chainId" = $1 AND status = 'SETTLED' ORDER BY "betId"`, [CHAIN_ID])
    ).rows.map((r) => r.id);
    const wallets = (await client.query<{ player: string }>(`SELECT player FROM "Bet" GROUP BY player ORDER BY count(*) DESC, player LIMIT 8`)).rows.map(
      (r) => r.player,
    );
    const chains = (await client.query<{ id: number }>(`SELECT "chainId"::int AS id FROM "Network" ORDER BY 1`)).rows.map((r) => r.id);
    if (settled.length < 200 || wallets.length < 8) throw new Error("too few settled bets or wallets in the fixture: raise --bets");
    const bodies: string[] = [];
    for (let i = 0; i < 8; i++) {
      bodies.push(requestBody(PLAYER_BETS, { wallet: wallets[i], first: 50 }));
      const size = 20 + 20 * (i % 5);
      bodies.push(requestBody(BET_RESULTS, { chainId: CHAIN_ID, betIds: settled.slice(i * 20, i * 20 + size) }));
      if (i % 2 === 0) bodies.push(requestBody(NETWORK_CONFIGS, { chainId: i === 0 ? null : (chains[(i / 2) % chains.length] ?? null) }));
    }
    return bodies;
  } finally {
    await client.end();
  }
}

interface GraphQLPhase {
  cache: "off" | "on";
  stats: RunStats;
  /** CPU ms per second each group spends with no request at all (timers, probes, polling), measured just before. */
  idle: Record<string, number>;
  /** The gateways' response cache outcomes during the measured run (graphql_response_cache_total). */
  outcomes: Record<string, number>;
  /** Bodies of the mix whose second request through nginx said X-Cache: HIT. */
  cacheableBodies: number;
  /** Cache on: a run of only the bodies the cache answers (every request a hit). */
  hitsOnly?: RunStats;
  cacheAnswers?: number;
  cacheBytesPerAnswer?: number;
  cacheUsedBytesPerAnswer?: number;
  limiterBytesPerKey?: number;
}

/** CPU ms per second of each group over `seconds` without traffic. */
async function idleCpu(groups: CpuGroups, seconds: number): Promise<Record<string, number>> {
  const read = async () => {
    const out: Record<string, Map<number, number>> = {};
    for (const [name, pids] of Object.entries(groups)) out[name] = new Map((await pids()).map((pid) => [pid, processCpuMs(pid) ?? 0]));
    return out;
  };
  const before = await read();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await read();
  return Object.fromEntries(
    Object.entries(after).map(([name, pids]) => [name, [...pids].reduce((sum, [pid, ms]) => sum + ms - (before[name]!.get(pid) ?? ms), 0) / seconds]),
  );
}

/** The gateways' graphql_response_cache_total by outcome, summed. */
async function cacheOutcomes(ports: number[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const m of text.matchAll(/^graphql_response_cache_total\{[^}]*result="(\w+)"[^}]*\} (\S+)$/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

/** Net of idle: what a request adds to a group's CPU. */
function netCpuMs(p: GraphQLPhase, group: string, stats: RunStats = p.stats): number {
  return stats.cpuMs[group]! - (p.idle[group]! * DURATION) / Math.max(1, stats.responses);
}

async function main(): Promise<boolean> {
  const started = performance.now();
  log("Capacity benchmark (issue 23, item 7): the capacity plan's per-core figures through the real topology");
  log(
    `  host ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "?"}), loadavg ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at start, ${new Date().toISOString()}`,
  );
  const url = databaseUrl(DB_NAME, SERVER_URL);
  await prepareDatabase(url);
  db = await openDatabase({ url, poolSize: 2 });
  const bodies = await mixBodies(url);

  // Servers ---------------------------------------------------------------------------------------
  const limiterRedis = await createPrivateRedis({ args: ["--maxmemory-policy", "noeviction"] });
  redises.push(limiterRedis);
  const cacheRedis = await createPrivateRedis({ args: ["--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru"] });
  redises.push(cacheRedis);
  const common = {
    NODE_ENV: "production",
    DATABASE_URL: url,
    CURSOR_SECRET: "bench-capacity-cursor-secret-of-this-run",
    LOG_LEVEL: benchConfig.BENCH_LOG_LEVEL ?? "warn",
    HOST: "127.0.0.1",
    APOLLO_TELEMETRY_DISABLED: "true",
  };
  const subgraphs: Record<string, { url: string; pid: number }> = {};
  for (const name of ["networks", "results", "history"]) {
    const port = await freePort();
    const child = spawnTypeScript(fileURLToPath(new URL("../bin/subgraph.ts", import.meta.url)), {
      args: [name],
      env: { ...common, PORT: String(port) },
      nodeFlags: SERVER_NODE_FLAGS,
    });
    children.push(child);
    subgraphs[name] = { url: `http://127.0.0.1:${port}`, pid: child.pid };
    await waitHttp(`${subgraphs[name].url}/metrics`, `subgraph ${name}`, child);
  }
  cluster = await startCluster({
    databaseUrl: url,
    redisUrl: limiterRedis.url,
    prefix: "bench-capacity:",
    nodes: 2,
    publishers: 1,
    env: { NODE_ENV: "production", TRUST_PROXY_HOPS: "0", REALTIME_POLL_INTERVAL_MS: "200", LOG_LEVEL: "info" },
    readyTimeoutMs: 120_000,
  });
  const gatewayPorts: [number, number] = [await freePort(), await freePort()];
  let gateways: Spawned[] = [];
  const startGateways = async (cache: "on" | "off") => {
    await Promise.all(gateways.map((g) => g.stop({ graceMs: 5_000 })));
    gateways = gatewayPorts.map((port) =>
      spawnTypeScript(fileURLToPath(new URL("../bin/gateway.ts", import.meta.url)), {
        env: {
          ...common,
          PORT: String(port),
          // Behind nginx: the client is the last X-Forwarded-For hop.
          TRUST_PROXY_HOPS: "1",
          NETWORKS_SUBGRAPH_URL: `${subgraphs.networks!.url}/graphql`,
          RESULTS_SUBGRAPH_URL: `${subgraphs.results!.url}/graphql`,
          HISTORY_SUBGRAPH_URL: `${subgraphs.history!.url}/graphql`,
          REDIS_URL: limiterRedis.url,
          RESPONSE_CACHE_REDIS_URL: cacheRedis.url,
          RESPONSE_CACHE: cache,
          // The points budget runs (one bucket in Redis per request) but never refuses this one client.
          RATE_LIMIT_POINTS: "1000000000",
          RATE_LIMIT_POINTS_PER_SECOND: "1000000000",
          // One client keeps hundreds of requests open: no cap on its requests in flight.
          RATE_LIMIT_MAX_IN_FLIGHT: "0",
        },
        nodeFlags: SERVER_NODE_FLAGS,
      }),
    );
    children.push(...gateways);
    await Promise.all(gateways.map((g, i) => waitHttp(`http://127.0.0.1:${gatewayPorts[i]}/metrics`, `gateway ${i}`, g)));
  };
  await startGateways("off");

  nginxDir = mkdtempSync(join(tmpdir(), "bench-capacity-nginx-"));
  chmodSync(nginxDir, 0o777); // nginx's workers drop root for nobody
  const nginxPort = await freePort();
  const shipped = readFileSync(fileURLToPath(new URL("../deploy/nginx.conf", import.meta.url)), "utf8");
  const conf = loopbackNginxConf(shipped, {
    dir: nginxDir,
    port: nginxPort,
    gatewayPorts,
    realtimePorts: cluster.nodes.map((n) => Number(new URL(n.url).port)) as [number, number],
  });
  // All load comes from 127.0.0.1: the per-address GraphQL rate would answer 429.
  const raised = conf.replace(/zone=graphql_per_address:(\w+) rate=\d+r\/s;/, "zone=graphql_per_address:$1 rate=100000r/s;");
  if (raised === conf) throw new Error("deploy/nginx.conf no longer has the per-address rate this benchmark raises");
  writeFileSync(join(nginxDir, "nginx.conf"), raised);
  nginx = spawnChild({ command: NGINX, args: ["-c", join(nginxDir, "nginx.conf"), "-p", nginxDir, "-g", "daemon off;"], stdout: "ignore" });
  const proxy = `http://127.0.0.1:${nginxPort}`;
  const nginxProcess = nginx;
  await waitHttp(`${proxy}/livez`, "nginx", nginxProcess);
  log(
    `  topology: nginx ${proxy} → gateways :${gatewayPorts.join(", :")} → subgraphs ${Object.values(subgraphs)
      .map((s) => s.url)
      .join(" ")} → ${DB_NAME}`,
  );
  log(`            realtime ${cluster.nodes.map((n) => n.url).join(" ")} + publisher on redis ${limiterRedis.url}; response cache redis ${cacheRedis.url}`);

  // GraphQL: the mix through nginx, response cache off then on -----------------------------------
  const sql = new pg.Client({ connectionString: url, application_name: APP });
  await sql.connect();
  const cpuGroups = () => ({
    nginx: () => withChildren(nginxProcess.pid),
    gateways: () => gateways.map((g) => g.pid),
    "subgraph networks": () => [subgraphs.networks!.pid],
    "subgraph results": () => [subgraphs.results!.pid],
    "subgraph history": () => [subgraphs.history!.pid],
    postgres: backendPids(sql, DB_NAME, APP),
  });
  const cacheClient = new Redis(cacheRedis.url, { maxRetriesPerRequest: 1 });
  const limiterClient = new Redis(limiterRedis.url, { maxRetriesPerRequest: 1 });
  const phases: GraphQLPhase[] = [];
  try {
    for (const cache of ["off", "on"] as const) {
      if (cache === "on") await startGateways("on");
      let cacheableBodies = 0;
      for (const body of bodies) {
        const problem = await checkResponse(`${proxy}/graphql`, body, () => null);
        if (problem) throw new Error(`check through nginx (cache ${cache}): ${problem}`);
        const again = await fetch(`${proxy}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body });
        await again.arrayBuffer();
        if (again.headers.get("x-cache") === "HIT") cacheableBodies++;
      }
      const load = { url: `${proxy}/graphql`, bodies, connections: CONNECTIONS, cpu: cpuGroups() };
      await runLoad({ ...load, seconds: WARMUP });
      const idle = await idleCpu(load.cpu, 6);
      const outcomes0 = await cacheOutcomes(gatewayPorts);
      const stats = await runLoad({ ...load, seconds: DURATION });
      const outcomes1 = await cacheOutcomes(gatewayPorts);
      const outcomes = Object.fromEntries(Object.entries(outcomes1).map(([k, v]) => [k, v - (outcomes0[k] ?? 0)]));
      const phase: GraphQLPhase = { cache, stats, idle, outcomes, cacheableBodies };
      if (cache === "on") {
        // Only the bodies the cache answers: every request a hit, so this is the gateway's CPU per hit.
        const hitBodies: string[] = [];
        for (const body of bodies) {
          const response = await fetch(`${proxy}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body });
          await response.arrayBuffer();
          if (response.headers.get("x-cache") === "HIT") hitBodies.push(body);
        }
        if (hitBodies.length > 0) phase.hitsOnly = await runLoad({ ...load, bodies: hitBodies, seconds: DURATION });
      }
      if (cache === "on") {
        const keys = await cacheClient.keys("responsecache:*");
        const sizes = await Promise.all(keys.map((k) => cacheClient.memory("USAGE", k)));
        const used = Number(/used_memory:(\d+)/.exec(await cacheClient.info("memory"))?.[1] ?? Number.NaN);
        // An answer is two keys (gateway/response-replay.ts): its header and its bytes.
        const answers = keys.filter((key) => key.startsWith("responsecache:head:")).length;
        phase.cacheAnswers = answers;
        phase.cacheBytesPerAnswer = sizes.reduce<number>((s, n) => s + Number(n ?? 0), 0) / Math.max(1, answers);
        phase.cacheUsedBytesPerAnswer = used / Math.max(1, answers);
        const limiterKeys = await limiterClient.keys("ratelimit:*");
        const limiterSizes = await Promise.all(limiterKeys.map((k) => limiterClient.memory("USAGE", k)));
        phase.limiterBytesPerKey = limiterSizes.reduce<number>((s, n) => s + Number(n ?? 0), 0) / Math.max(1, limiterKeys.length);
      }
      phases.push(phase);
      log(
        `  GraphQL mix, response cache ${cache}: ${fmt.rps(stats.rps)} req/s, ${fmt.int(stats.responses)} responses, ${errorCount(stats)} errors, loadavg ${stats.load1.toFixed(1)}; ` +
          `cache outcomes ${JSON.stringify(outcomes)}; ${cacheableBodies} of ${bodies.length} bodies HIT on a second request`,
      );
    }
  } finally {
    cacheClient.disconnect();
    limiterClient.disconnect();
    await sql.end();
  }

  // Realtime ----------------------------------------------------------------------------------------
  const realtime: RealtimeFigures = await measureRealtime(cluster, db, {
    idleSockets: IDLE_SOCKETS,
    perAddress: PER_ADDRESS,
    firehosePerNode: 150,
    rate: 20,
    seconds: 8,
    chainId: CHAIN_ID,
  });

  // Replica lag -------------------------------------------------------------------------------------
  const replica: ReplicaFigures | undefined = args["skip-replica"] ? undefined : await measureReplicaLag({ seconds: 8, batch: 500 });

  return report(phases, realtime, replica, (performance.now() - started) / 1000);
}

function report(phases: GraphQLPhase[], rt: RealtimeFigures, replica: ReplicaFigures | undefined, wallS: number): boolean {
  const off = phases.find((p) => p.cache === "off")!;
  const on = phases.find((p) => p.cache === "on")!;
  const subgraphMs = (p: GraphQLPhase) => ["subgraph networks", "subgraph results", "subgraph history"].reduce((sum, k) => sum + netCpuMs(p, k), 0);
  const measured: Figures = {
    gatewayCpuMsMiss: netCpuMs(off, "gateways"),
    gatewayCpuMsHit: on.hitsOnly ? netCpuMs(on, "gateways", on.hitsOnly) : Number.NaN,
    subgraphCpuMsMiss: subgraphMs(off),
    postgresCpuMsMiss: netCpuMs(off, "postgres"),
    realtimeCpuMsPerDelivery: (rt.cpuMsPerDeliveryPerNode[0]! + rt.cpuMsPerDeliveryPerNode[1]!) / 2,
    bytesPerSocket: rt.bytesPerSocket,
    redisBytesPerCachedAnswer: on.cacheBytesPerAnswer ?? Number.NaN,
    redisBytesPerLimiterKey: on.limiterBytesPerKey ?? Number.NaN,
  };
  log();
  log(
    "Per request of the mix: CPU ms from /proc over the measured run ÷ requests nginx answered (raw), and net of each process's idle CPU (measured 6 s just before, no traffic):",
  );
  const groups = Object.keys(off.stats.cpuMs);
  log(
    table(
      ["response cache", "", "req/s (wall)", "responses", "errors", ...groups],
      phases.flatMap((p) => [
        [p.cache, "raw", fmt.rps(p.stats.rps), fmt.int(p.stats.responses), String(errorCount(p.stats)), ...groups.map((g) => fmt.ms(p.stats.cpuMs[g]!))],
        [p.cache, "net", "", "", "", ...groups.map((g) => fmt.ms(netCpuMs(p, g)))],
        [p.cache, "idle ms/s", "", "", "", ...groups.map((g) => fmt.ms(p.idle[g]!))],
        ...(p.hitsOnly
          ? [
              [
                "on, hits only",
                "net",
                fmt.rps(p.hitsOnly.rps),
                fmt.int(p.hitsOnly.responses),
                String(errorCount(p.hitsOnly)),
                ...groups.map((g) => fmt.ms(netCpuMs(p, g, p.hitsOnly))),
              ],
            ]
          : []),
      ]),
      [false, false, true, true, true, ...groups.map(() => true)],
    ),
  );
  log(
    `Response cache (on): ${on.cacheAnswers} answers, MEMORY USAGE ${fmt.int(on.cacheBytesPerAnswer ?? Number.NaN)} B per answer (used_memory ÷ answers ${fmt.int(on.cacheUsedBytesPerAnswer ?? Number.NaN)} B); limiter bucket ${fmt.int(on.limiterBytesPerKey ?? Number.NaN)} B`,
  );
  log(
    `Realtime: ${rt.idleSockets} idle subscribed sockets on one node from ${rt.addresses} addresses: RSS ${rt.rssBeforeMb.toFixed(1)} → ${rt.rssAfterMb.toFixed(1)} MiB; ` +
      `${rt.updatesWritten} updates × ${rt.firehoseSocketsPerNode} firehose sockets per node: ${fmt.int(rt.deliveries)} deliveries (${rt.lost} missing), ` +
      `CPU ${rt.cpuMsPerDeliveryPerNode.map((x) => x.toFixed(4)).join(" / ")} ms per delivery (node A / B), ${fmt.int(rt.wallDeliveriesPerSecondPerNode)} deliveries/s per node (wall)`,
  );
  if (replica)
    log(
      `Replica: ${fmt.int(replica.rowsWritten)} outbox rows in batches of 500 (${fmt.int(replica.rowsPerSecond)} rows/s, ${replica.walMbPerSecond.toFixed(1)} MB/s of WAL): ` +
        `replay lag p50 ${replica.replayLagMsP50.toFixed(0)} ms, max ${replica.replayLagMsMax.toFixed(0)} ms (${replica.samples} samples), most WAL behind ${fmt.int(replica.replayBytesMax / 1024)} KiB, caught up ${replica.catchUpMs.toFixed(0)} ms after the last commit`,
    );
  else log("Replica: skipped (--skip-replica)");

  type Row = [string, number, number, "±" | "≤"];
  const rows: Row[] = [
    ["gateway CPU ms/request, cache off (miss)", measured.gatewayCpuMsMiss, MODEL.gatewayCpuMsMiss, "±"],
    ["gateway CPU ms/request answered by the cache", measured.gatewayCpuMsHit, MODEL.gatewayCpuMsHit, "±"],
    ["subgraphs CPU ms/request, cache off", measured.subgraphCpuMsMiss, MODEL.subgraphCpuMsMiss, "±"],
    ["PostgreSQL CPU ms/request, cache off", measured.postgresCpuMsMiss, MODEL.postgresCpuMsMiss, "±"],
    ["realtime CPU ms/delivery", measured.realtimeCpuMsPerDelivery, MODEL.realtimeCpuMsPerDelivery, "±"],
    ["realtime KiB/idle socket", measured.bytesPerSocket / 1024, MODEL.bytesPerSocket / 1024, "±"],
    ["Redis KiB/cached answer", measured.redisBytesPerCachedAnswer / 1024, MODEL.redisBytesPerCachedAnswer / 1024, "±"],
    ["Redis B/limiter bucket", measured.redisBytesPerLimiterKey, MODEL.redisBytesPerLimiterKey, "±"],
  ];
  if (replica) rows.push(["replica replay lag max, ms", replica.replayLagMsMax, MODEL.replicaReplayLagMsMax, "≤"]);
  const verdict = ([, m, model, kind]: Row) =>
    !Number.isFinite(m)
      ? "NOT MEASURED"
      : kind === "≤"
        ? m <= model
          ? "matches"
          : "EXCEEDS"
        : Math.abs(m - model) <= TOLERANCE * model
          ? "matches"
          : "DIFFERS";
  log();
  log(`The model's figures beside the measured ones (CPU and memory match within ±${TOLERANCE * 100} %; lag matches at or below the model's bound):`);
  log(
    table(
      ["figure", "measured", "model", "verdict"],
      rows.map((r) => [r[0], r[1] >= 10 ? r[1].toFixed(0) : r[1].toPrecision(3), String(r[2]), verdict(r)]),
      [false, true, true, false],
    ),
  );
  log();
  log(
    `Sizing from the measured figures (utilisation ${ASSUMPTIONS.utilisation}, cache hit ratio ${ASSUMPTIONS.cacheHitRatio}, ${ASSUMPTIONS.deliveriesPerSocketPerSecond} deliveries/s per socket):`,
  );
  const plans = [
    [1_000, 10_000],
    [10_000, 100_000],
    [100_000, 1_000_000],
  ].map(([rps, sockets]) => sizeDeployment(measured, rps!, sockets!));
  log(
    table(
      [
        "req/s",
        "sockets",
        "gateways",
        "subgraph procs",
        "PG cores",
        "replicas",
        "realtime nodes",
        "Redis cache MiB",
        "Redis limiter MiB",
        "PG conns primary",
        "per replica",
      ],
      plans.map((p) => [
        fmt.int(p.rps),
        fmt.int(p.sockets),
        String(p.gateways),
        String(p.subgraphProcesses),
        p.postgresCores.toFixed(1),
        String(p.replicas),
        String(p.realtimeNodes),
        fmt.int(p.redisCacheMb),
        fmt.int(p.redisLimiterMb),
        fmt.int(p.primaryConnections),
        fmt.int(p.replicaConnections),
      ]),
      Array(11).fill(true) as boolean[],
    ),
  );
  const errors = phases.reduce((s, p) => s + errorCount(p.stats) + (p.hitsOnly ? errorCount(p.hitsOnly) : 0), 0);
  const allMatch = rows.every((r) => verdict(r) === "matches");
  log();
  log(
    `${errors} failed requests; ${rt.lost} deliveries missing; ${allMatch ? "every figure matches the model" : "NOT every figure matches the model"}; ${fmt.s(wallS * 1000)} in all; loadavg ${loadavg()[0]!.toFixed(1)}`,
  );
  return allMatch && errors === 0 && rt.lost === 0;
}

await runBenchmark(main, cleanup, { watchdogMs: 15 * 60_000 });
