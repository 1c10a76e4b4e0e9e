// A Redis that hangs under load: the gateway (rate limit and response cache in Redis, wired from
// the configuration as bin/gateway.ts wires it) on a private redis-server, driven at a fixed
// concurrency, first with Redis answering, then with Redis frozen (SIGSTOP) shortly after the
// second run starts. Prints p50/p99/max of both runs and whether p99 stayed within 2× of normal.
// Only the requests in flight when Redis froze wait out REDIS_COMMAND_TIMEOUT_MS, so the ratio
// depends on how many requests a run has: with 2 000 at concurrency 10 they are 0.5 %.
//
//   npx tsx bench/redis-stall.ts [--requests 2000] [--concurrency 10] [--freeze-at 100] [--timeout-ms 150]
//
// The database is an in-memory PGlite (or PostgreSQL with TEST_DB=postgres, as the tests do).
import { parseArgs } from "node:util";
import { startStack } from "../bin/stack.ts";
import { GATEWAY_SECTIONS, gatewaySettings } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createRedisClient } from "../core/redis.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { createTestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis } from "../test/private-redis.ts";
import { log } from "./common.ts";

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "10" },
    "freeze-at": { type: "string", default: "100" },
    "timeout-ms": { type: "string", default: "150" },
  },
});
const requests = Number(args.requests);
const concurrency = Number(args.concurrency);
const freezeAt = Number(args["freeze-at"]);

const redis = await createPrivateRedis();
const client = createRedisClient(redis.url, { logger: silentLogger(), role: "gateway", maxRetriesPerRequest: 1 });
const db = await createTestDatabase();
try {
  await eventually(() => client.status === "ready", 10_000, "the private redis");
  await seedFixtures(db, { bets: 40, proofCache: readProofCache() });
  // Every request a client of its own (one trusted proxy): the limit charges Redis without refusing.
  const config = loadConfig(GATEWAY_SECTIONS, { REDIS_COMMAND_TIMEOUT_MS: args["timeout-ms"], TRUST_PROXY_HOPS: "1", RESPONSE_CACHE: "on" });
  const stack = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: gatewaySettings(config, { logger: silentLogger(), redis: client }),
  });
  let sent = 0;
  const ask = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.${(++sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}` },
      body: JSON.stringify({ query: "{ networkConfigs { chainId name } }" }),
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    return performance.now() - started;
  };
  const run = async (onIssued: (i: number) => void = () => undefined) => {
    const times: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          onIssued(next++);
          times.push(await ask());
        }
      }),
    );
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.ceil(times.length * q) - 1]!;
    return { p50: at(0.5), p99: at(0.99), max: times[times.length - 1]!, slow: times.filter((t) => t >= Number(args["timeout-ms"])).length };
  };
  await run(); // warm-up: plans and cache entries
  const normal = await run();
  const stalled = await run((i) => {
    if (i === freezeAt) redis.freeze();
  });
  const figures = (r: typeof normal) => `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms, ≥ deadline: ${r.slow}`;
  log(`Redis answering: ${figures(normal)}`);
  log(`Redis hung:      ${figures(stalled)}`);
  log(`p99 ratio ${(stalled.p99 / normal.p99).toFixed(2)}× — ${stalled.p99 <= 2 * normal.p99 ? "PASS" : "FAIL"} (within 2× of normal)`);
  await stack.stop();
} finally {
  client.disconnect();
  await redis.stop();
  await db.close();
}
