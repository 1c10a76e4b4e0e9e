import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GATEWAY_SECTIONS, gatewaySettings } from "../bin/wiring.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { loadConfig } from "../core/config.ts";
import type { HealthReport } from "../core/health.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createRedisClient } from "../core/redis.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { privateRedisServer, serviceTitle, skipWithout } from "../test/services.ts";

// A private redis-server of its own: without the binary the suite says SKIPPED (never under CI).
const redisServer = privateRedisServer;
const skip = skipWithout(redisServer);

// A Redis that hangs (SIGSTOP: its socket stays open, nothing answers) under a gateway that uses
// it on every request — the rate limit and the response cache. Every request still answers, in
// bounded time; the limit goes on in process (not off), and /health says DEGRADED. The gateway is
// wired from the configuration as bin/gateway.ts wires it.

const TIMEOUT_MS = 150;
// Settings (a minute) are cacheable: each request asks the response cache too.
const QUERY = "{ networkConfigs { chainId name } }";

let redis: PrivateRedis;
let client: ReturnType<typeof createRedisClient>;
let db: TestDatabase;
let stack: RunningStack;

beforeAll(async () => {
  if (skip) return;
  redis = await createPrivateRedis();
  client = createRedisClient(redis.url, { logger: silentLogger(), role: "gateway", maxRetriesPerRequest: 1 });
  await eventually(() => client.status === "ready", 10_000, "the private redis");
  db = await createTestDatabase();
  await seedFixtures(db, { bets: 20, proofCache: readProofCache() });
  const config = loadConfig(GATEWAY_SECTIONS, {
    REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS),
    // One trusted proxy: each load request names its own client; the greedy one reuses its name.
    TRUST_PROXY_HOPS: "1",
    // A budget of a few requests (each pays at least 10 points), refilled slowly.
    MAX_QUERY_COST: "50",
    RATE_LIMIT_POINTS: "50",
    RATE_LIMIT_POINTS_PER_SECOND: "1",
    RESPONSE_CACHE: "on",
  });
  stack = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: gatewaySettings(config, { logger: silentLogger(), redis: client }),
  });
}, 120_000);

afterAll(async () => {
  if (skip) return;
  redis?.thaw();
  await stack?.stop();
  client?.disconnect();
  await redis?.stop();
  await db?.close();
});

let clients = 0;
/** One request as client `name` (a fresh one by default); `ms` is how long it took. */
async function ask(name = `198.51.100.${++clients % 250}-${clients}`) {
  const started = performance.now();
  const response = await fetch(`${stack.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": name },
    body: JSON.stringify({ query: QUERY }),
    // Far beyond any answer with a deadline; a request hanging on Redis ends here and fails.
    signal: AbortSignal.timeout(5_000),
  });
  await response.arrayBuffer();
  return { status: response.status, remaining: response.headers.get("ratelimit-remaining"), ms: performance.now() - started };
}

/** `count` requests, `concurrency` at a time; `onIssued(i)` runs before request i. */
async function load(count: number, concurrency: number, onIssued: (i: number) => void = () => undefined) {
  const results: Awaited<ReturnType<typeof ask>>[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        onIssued(next++);
        results.push(await ask());
      }
    }),
  );
  return results;
}

const p99 = (results: { ms: number }[]) => results.map((r) => r.ms).sort((a, b) => a - b)[Math.ceil(results.length * 0.99) - 1]!;
/** Commands a request can send Redis: the rate limit's script, the response cache's read and its write. */
const COMMANDS_PER_REQUEST = 3;

async function health(): Promise<{ status: number; body: HealthReport }> {
  const response = await fetch(`${stack.url}/health`, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as HealthReport };
}

describe.skipIf(skip)(serviceTitle("a Redis that hangs under load", redisServer), () => {
  it("never stalls a request: the limit goes on in process, health says DEGRADED, Redis is used again once back", async () => {
    await load(50, 10); // warm up: the first requests plan queries and fill the cache
    const normal = await load(200, 10);
    expect(normal.every((r) => r.status === 200)).toBe(true);
    const normalP99 = p99(normal);

    // Every command the gateway sends Redis, counted from the moment it froze (no clock involved).
    const sent = vi.spyOn(client, "sendCommand");
    let frozenAt: number | undefined;
    const stalled = await load(200, 10, (i) => {
      if (i === 20) {
        redis.freeze();
        frozenAt = sent.mock.calls.length;
      }
    });
    expect(frozenAt).toBeDefined();
    expect(stalled.map((r) => r.status).filter((status) => status !== 200)).toEqual([]);
    // Only requests already under way when it froze (10 at a time) wait on Redis; once one times
    // out the rest skip it: of the 180 requests after the freeze, at most those 10 reached Redis
    // (the background PING that finds it back is not a request's).
    const whileFrozen = sent.mock.calls.slice(frozenAt).filter(([command]) => command.name !== "ping");
    sent.mockRestore();
    expect(whileFrozen.length).toBeLessThanOrEqual(10 * COMMANDS_PER_REQUEST);
    console.info(
      `p99 normal ${normalP99.toFixed(1)} ms, with Redis hung ${p99(stalled).toFixed(1)} ms (deadline ${TIMEOUT_MS} ms); ${whileFrozen.length} commands sent Redis while hung`,
    );

    // Still limited, in process: the greedy client gets its budget's few requests, then 429.
    const greedy: number[] = [];
    for (let i = 0; i < 7; i++) greedy.push((await ask("203.0.113.9")).status);
    expect(greedy.slice(0, 3)).toEqual([200, 200, 200]);
    expect(greedy.slice(-2)).toEqual([429, 429]);
    expect(greedy).toEqual([...greedy].sort((a, b) => a - b));

    const degraded = await health();
    expect(degraded.status).toBe(200);
    expect(degraded.body.status).toBe("DEGRADED");
    expect(degraded.body.checks.find((check) => check.name === "redis")).toMatchObject({ status: "DEGRADED", detail: "timed out" });

    redis.thaw();
    // Back on Redis: the bucket of a new client lives in Redis again, and health recovers.
    await eventually(async () => (await health()).body.checks.find((check) => check.name === "redis")?.status === "OK", 10_000, "redis OK in /health");
    await ask("203.0.113.77");
    await eventually(async () => (await client.keys("ratelimit:*203.0.113.77*")).length === 1, 5_000, "the bucket in Redis");
  });
});
