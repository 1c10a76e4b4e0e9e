// The cost of recording schema usage (gateway/schema-usage.ts): the stack (bench/serve.ts) in a
// child process with BENCH_SCHEMA_USAGE=0 and =1, interleaved in pairs (off, on, then on, off, …),
// the same cheap gateway-bound query under autocannon; the server child's CPU ms per request, and
// the median over pairs of on/off. Cheap queries make the recording's share largest.
//   npx tsx bench/schema-usage.ts [--pairs 4] [--seconds 10] [--connections 10] [--bets 2000]
// Needs PostgreSQL (BENCH_DATABASE_URL); the database bench_schema_usage is dropped at the end.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { BaseContext, GraphQLRequestContextDidResolveOperation, GraphQLRequestListener } from "@apollo/server";
import { parse } from "graphql";
import { silentLogger } from "../core/logger.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { createUsageRecorder } from "../gateway/schema-usage.ts";
import { parseArgs } from "node:util";
import { openDatabase } from "../core/db.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { databaseUrl, dropPostgresDatabase, recreatePostgresDatabase } from "../test/db.ts";
import { benchConfig, fmt, log, median, requestBody, stopChild } from "./common.ts";
import { runLoad, spawnServer } from "./load.ts";

const { values } = parseArgs({
  options: {
    pairs: { type: "string", default: "4" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    bets: { type: "string", default: "2000" },
  },
});
const PAIRS = Number(values.pairs);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const NAME = "bench_schema_usage";
const url = databaseUrl(NAME, benchConfig.BENCH_DATABASE_URL);
const body = requestBody("query Settings { networkConfigs { chainId name confirmations contracts { name address } } }", {});

/** The recorder's own CPU per request, in process: its plugin's hooks for a document it has seen (no database: nothing is flushed). */
async function hookCostNs(): Promise<number> {
  const schema = apiSchemaOf(readFileSync(new URL("../supergraph.graphql", import.meta.url), "utf8"));
  const recorder = createUsageRecorder({ db: { prisma: {} } as never, logger: silentLogger(), flushMs: 3_600_000 });
  const context = {
    schema,
    document: parse("query Settings { networkConfigs { chainId name } }"),
    operationName: "Settings",
  } as unknown as GraphQLRequestContextDidResolveOperation<BaseContext>;
  const start = recorder.plugin.requestDidStart as (context: unknown) => Promise<GraphQLRequestListener<BaseContext>>;
  const once = async () => (await start(context)).didResolveOperation!(context);
  for (let i = 0; i < 20_000; i++) await once();
  const n = 500_000;
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await once();
  const used = process.cpuUsage(before);
  await recorder.stop().catch(() => undefined);
  return ((used.user + used.system) * 1000) / n;
}
log(`recorder hooks in process: ${(await hookCostNs()).toFixed(0)} ns CPU per request (document seen before)`);

await recreatePostgresDatabase(NAME, benchConfig.BENCH_DATABASE_URL);
const seedDb = await openDatabase({ url, migrate: true });
await seedFixtures(seedDb, { bets: Number(values.bets), proofCache: readProofCache(), outbox: false });
await seedDb.close();

async function measure(recording: boolean): Promise<number> {
  const { child, info } = await spawnServer<{ gateway: string }>(fileURLToPath(new URL("./serve.ts", import.meta.url)), {
    env: { BENCH_SERVE_DATABASE_URL: url, BENCH_SCHEMA_USAGE: recording ? "1" : "0" },
    ready: (line) => typeof line.gateway === "string",
  });
  try {
    await runLoad({ url: info.gateway, bodies: [body], connections: CONNECTIONS, seconds: 3, cpu: {} });
    const stats = await runLoad({ url: info.gateway, bodies: [body], connections: CONNECTIONS, seconds: SECONDS, cpu: { server: () => [child.pid] } });
    if (stats.non2xx + stats.socketErrors + stats.timeouts + stats.graphqlErrors > 0) throw new Error(`errors under load: ${JSON.stringify(stats)}`);
    log(
      `  recording ${recording ? "on " : "off"}: ${fmt.int(stats.rps)} req/s, ${stats.cpuMs.server!.toFixed(3)} CPU ms/request, load1 ${stats.load1.toFixed(2)}`,
    );
    return stats.cpuMs.server!;
  } finally {
    await stopChild(child);
  }
}

const ratios: number[] = [];
const on: number[] = [];
const off: number[] = [];
try {
  for (let pair = 0; pair < PAIRS; pair++) {
    log(`pair ${pair + 1} of ${PAIRS}`);
    const order = pair % 2 === 0 ? [false, true] : [true, false];
    const result: Record<string, number> = {};
    for (const recording of order) result[String(recording)] = await measure(recording);
    on.push(result.true!);
    off.push(result.false!);
    ratios.push(result.true! / result.false!);
  }
} finally {
  await dropPostgresDatabase(NAME, benchConfig.BENCH_DATABASE_URL);
}
log(`server CPU per request: off ${median(off).toFixed(3)} ms, on ${median(on).toFixed(3)} ms (medians of ${PAIRS} runs)`);
log(
  `recording's cost: median of the pairs' on/off ${((median(ratios) - 1) * 100).toFixed(1)} % (pairs: ${ratios.map((r) => `${((r - 1) * 100).toFixed(1)} %`).join(", ")})`,
);
