// The gateway's response cache under load: finalized bets with the cache off, in process, and in
// Redis. Run under `flock /tmp/bench.lock`:
//
//   npx tsx bench/response-cache.ts [--duration 8] [--connections 10] [--bets 1000]
//
// Makes a fresh PostgreSQL database `bench_response_cache` on BENCH_DATABASE_URL's server (default
// postgresql://postgres@127.0.0.1:5432/postgres), seeds the fixture set, and for each cache mode
// serves the stack in a child process (this file with --serve) that autocannon drives from here.
// Scenarios: `betResult` of one finalized settled bet with its proof, and `betResults` of 100
// finalized settled bets. Reports req/s, latency and CPU per request of the server child and of
// the PostgreSQL backends (CPU is the figure to trust on a busy machine). Redis mode needs
// REDIS_URL or 127.0.0.1:6379 and uses a key prefix of its own, deleted at the end.
import { fileURLToPath } from "node:url";
import { availableParallelism, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { pino } from "pino";
import { openDatabase } from "../core/db.ts";
import { stopOnSignals } from "../bin/wiring.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { createMemoryResponseCacheStore, RedisResponseCacheStore, type ResponseCacheStore } from "../gateway/response-cache.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { databaseUrl, dropPostgresDatabase, recreatePostgresDatabase } from "../test/db.ts";
import { benchConfig, log, startBenchStack, stopChild } from "./common.ts";
import { backendPids, errorCount, runLoad, spawnServer } from "./load.ts";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    serve: { type: "string" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    bets: { type: "string", default: "1000" },
  },
});

const SERVER_URL = benchConfig.BENCH_DATABASE_URL;
const REDIS_URL = benchConfig.BENCH_REDIS_URL;
const DB_NAME = "bench_response_cache";
const MODES = ["off", "memory", "redis"] as const;
type Mode = (typeof MODES)[number];

const benchDatabaseUrl = () => databaseUrl(DB_NAME, SERVER_URL);

// ---------------------------------------------------------------------------------------------
// --serve <mode> <prefix>: the stack in this child, one JSON line on stdout when it listens
// ---------------------------------------------------------------------------------------------

async function serve(mode: Mode, prefix: string): Promise<void> {
  const logger = pino({ name: "bench-response-cache", level: "warn" }, pino.destination(2));
  const db = await openDatabase({ url: benchDatabaseUrl(), logger, migrate: false });
  const redis = mode === "redis" ? new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined;
  const responseCache: ResponseCacheStore | undefined =
    mode === "off"
      ? undefined
      : redis
        ? new RedisResponseCacheStore(redis, { logger, prefix })
        : createMemoryResponseCacheStore({ maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 });
  const stack = await startBenchStack(db, logger, { responseCache });
  process.stdout.write(`${JSON.stringify({ pid: process.pid, gateway: `${stack.url}/graphql` })}\n`);
  stopOnSignals(logger, async () => {
    await stack.stop();
    redis?.disconnect();
    await db.close();
  });
}

function startServer(mode: Mode, prefix: string) {
  return spawnServer<{ gateway: string }>(fileURLToPath(import.meta.url), {
    args: ["--serve", mode, prefix],
    ready: (line) => typeof line.gateway === "string",
    timeoutMs: 120_000,
  });
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const BET_RESULT = `query ($betId: UInt256!) { betResult(chainId: 31337, betId: $betId) {
  betId player stake game status result { outcome won payout proof { piA piB piC publicSignals verified } } } }`;
// bench/graphql.ts's scenario a, within the default cost limit (5 000).
const BET_RESULTS = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) {
  betId status result { outcome won payout proof { piA piB piC publicSignals verified } } } }`;

/** One request: its X-Cache and its GraphQL errors, if any. */
async function ask(url: string, body: string): Promise<{ xCache: string | null; errors?: string }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  const json = (await response.json()) as { errors?: unknown[] };
  return { xCache: response.headers.get("x-cache"), errors: json.errors ? JSON.stringify(json.errors).slice(0, 300) : undefined };
}

async function main(): Promise<void> {
  await recreatePostgresDatabase(DB_NAME, SERVER_URL);
  // Kept open for the run: it reads the benchmark database's backends from pg_stat_activity.
  const admin = new pg.Client({ connectionString: SERVER_URL, application_name: "bench-response-cache" });
  await admin.connect();
  const prefix = `bench:responsecache:${process.pid}:`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const db = await openDatabase({ url: benchDatabaseUrl(), migrate: true });
    await seedFixtures(db, { bets: Number(args.bets), provenLimit: 100, outbox: false, proofCache: readProofCache() });
    await releaseProverResources(); // snarkjs' worker threads would keep this process alive
    const rows = await db.prisma.$queryRawUnsafe<{ betId: string }[]>(
      `SELECT b."betId"::text AS "betId" FROM "Bet" b JOIN "IndexingCursor" c ON c."chainId" = b."chainId"
       WHERE b."chainId" = 31337 AND b.status = 'SETTLED' AND b."lastChangeBlock" <= c."finalizedBlock" ORDER BY b."betId" LIMIT 100`,
    );
    await db.close();
    if (rows.length < 100) throw new Error(`only ${rows.length} finalized settled bets: raise --bets`);
    const ids = rows.map((r) => r.betId);
    const scenarios = [
      { name: "betResult (1 bet + proof)", body: JSON.stringify({ query: BET_RESULT, variables: { betId: ids[0] } }) },
      { name: "betResults (100 bets + proofs)", body: JSON.stringify({ query: BET_RESULTS, variables: { ids } }) },
    ];
    const backends = backendPids(admin, DB_NAME, "bench-response-cache");

    log(`Response cache benchmark: ${args.bets} bets, autocannon ${args.connections} connections, ${args.duration} s per run after ${args.warmup} s warm-up`);
    log(
      `host: ${availableParallelism()} CPUs shared with the server, PostgreSQL and the load generator; loadavg ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
    log();
    log("| cache | scenario | X-Cache | req/s | p50 ms | p99 ms | server CPU ms/req | pg CPU ms/req | errors |");
    log("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const mode of MODES) {
      const { child, info } = await startServer(mode, prefix);
      const { gateway } = info;
      const cpu = { server: () => [child.pid!], pg: backends };
      const load = (body: string, seconds: number) => runLoad({ url: gateway, bodies: [body], connections: Number(args.connections), seconds, cpu });
      try {
        for (const scenario of scenarios) {
          const first = await ask(gateway, scenario.body);
          if (first.errors) throw new Error(`${scenario.name}: ${first.errors}`);
          await load(scenario.body, Number(args.warmup));
          const probe = await ask(gateway, scenario.body);
          const run = await load(scenario.body, Number(args.duration));
          log(
            `| ${mode} | ${scenario.name} | ${probe.xCache ?? "—"} | ${run.rps.toFixed(0)} | ${run.p50.toFixed(2)} | ${run.p99.toFixed(2)} | ` +
              `${run.cpuMs.server!.toFixed(3)} | ${run.cpuMs.pg!.toFixed(3)} | ${errorCount(run)} |`,
          );
        }
      } finally {
        await stopChild(child);
      }
    }
    log();
    log(
      `loadavg at the end ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
  } finally {
    const keys = await redis.keys(`${prefix}*`).catch(() => []);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await admin.end();
    await dropPostgresDatabase(DB_NAME, SERVER_URL);
  }
}

if (args.serve) {
  await serve(args.serve as Mode, positionals[0] ?? "bench:responsecache:");
} else {
  await main();
}
