// The stack under load, in its own process (started by bench/graphql.ts): the three subgraphs and
// the gateway on free loopback ports over the database in BENCH_SERVE_DATABASE_URL. Prints one JSON
// line on stdout — { "gateway": ".../graphql", "subgraphs": { name: ".../graphql" } } — and
// stops on SIGTERM/SIGINT. Logs (warn and above) go to stderr so stdout stays machine-readable.
// The gateway gets the configured query limits (depth, aliases, cost: their checks are part of the
// per-request cost) but no per-client rate limit or in-flight cap: every request comes from one
// loopback client, so the limiter would only measure itself (HTTP 429 once its RATE_LIMIT_POINTS
// are spent, or past RATE_LIMIT_MAX_IN_FLIGHT connections). BENCH_RESPONSE_CACHE=1 turns on the
// in-process response cache (bench/document-cost.ts).
import { pino } from "pino";
import { gatewayProtection, stopOnSignals } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { createMemoryResponseCacheStore } from "../gateway/response-cache.ts";
import { createUsageRecorder } from "../gateway/schema-usage.ts";
import { benchConfig, startBenchStack } from "./common.ts";

const url = benchConfig.BENCH_SERVE_DATABASE_URL;
if (!url) {
  process.stderr.write("bench/serve.ts: BENCH_SERVE_DATABASE_URL is not set\n");
  process.exit(2);
}

const logger = pino({ name: "bench-serve", level: benchConfig.BENCH_LOG_LEVEL ?? "warn" }, pino.destination(2));
const db = await openDatabase({ url, logger, migrate: false });
// BENCH_SCHEMA_USAGE=1: schema usage recorded as a gateway does, on a connection of its own (bench/schema-usage.ts).
const usageDb = benchConfig.BENCH_SCHEMA_USAGE ? await openDatabase({ url, logger, poolSize: 1, applicationName: "schema-usage" }) : undefined;
const schemaUsage = usageDb ? createUsageRecorder({ db: usageDb, logger }) : undefined;
const stack = await startBenchStack(db, logger, {
  ...gatewayProtection(loadConfig(["shared", "gateway"])),
  rateLimit: undefined,
  inFlight: undefined,
  schemaUsage,
  ...(benchConfig.BENCH_RESPONSE_CACHE ? { responseCache: createMemoryResponseCacheStore({ maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 }) } : {}),
});
process.stdout.write(`${JSON.stringify({ pid: process.pid, gateway: `${stack.url}/graphql`, subgraphs: stack.subgraphUrls })}\n`);
stopOnSignals(logger, async () => {
  await stack.stop();
  await usageDb?.close();
  await db.close();
});
