import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { startService, type RunningService } from "../test/service.ts";
import { privateRedisServer, serviceTitle, skipWithout } from "../test/services.ts";

// A private redis-server of its own: without the binary the suite says SKIPPED (never under CI).
const redisServer = privateRedisServer;
const skip = skipWithout(redisServer);

// `npm start` with REDIS_URL: one process with the production gateway's shared setup — the rate
// limit's buckets and the response cache in Redis, and Socket.IO on the Redis adapter — so a user
// can try it without running the services apart. A private redis-server, so the keys seen are
// this service's alone.

let redis: PrivateRedis;
let client: Redis;
let service: RunningService;

beforeAll(async () => {
  if (skip) return;
  redis = await createPrivateRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  // A budget refilled at one point a second: what the headers count down is still in the bucket when read.
  service = await startService({ env: { REDIS_URL: redis.url, DEMO_MODE: "fixtures", DEMO_BETS: "20", RATE_LIMIT_POINTS_PER_SECOND: "1" } });
}, 90_000);
afterAll(async () => {
  if (skip) return;
  await service?.stop();
  client?.disconnect();
  await redis?.stop();
});

async function ask(query: string) {
  const response = await fetch(`${service.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  await response.arrayBuffer();
  return { status: response.status, remaining: Number(response.headers.get("ratelimit-remaining")) };
}

describe.skipIf(skip)(serviceTitle("npm start with REDIS_URL", redisServer), () => {
  it("charges the points budget in Redis: the bucket there is the one the headers count down", async () => {
    const first = await ask("{ networkConfigs { chainId } }");
    const second = await ask("{ networkConfigs { chainId } }");
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.remaining).toBeLessThan(first.remaining);
    const buckets = await client.keys("ratelimit:*");
    expect(buckets).toHaveLength(1);
    // The bucket as the last settlement left it (sent while the answer was written): what that
    // answer reported, give or take the rounding and the refill of a second.
    await eventually(async () => Math.floor(Number(await client.hget(buckets[0]!, "tokens"))) >= second.remaining, 5_000, "the settlement in Redis");
    expect(Math.floor(Number(await client.hget(buckets[0]!, "tokens")))).toBeLessThanOrEqual(second.remaining + 2);
  });

  it("keeps the response cache in Redis", async () => {
    await ask("{ networkConfigs { chainId name } }");
    const started = Date.now();
    while ((await client.keys("responsecache:*")).length === 0 && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await client.keys("responsecache:*")).length).toBeGreaterThan(0);
  });

  it("runs Socket.IO on the Redis adapter, and checks Redis in /health", async () => {
    const channels = await client.pubsub("CHANNELS", "bets:socket.io*");
    expect(channels.length).toBeGreaterThan(0);
    const response = await fetch(`${service.url}/health`);
    const report = (await response.json()) as { checks: { name: string; status: string }[] };
    expect(report.checks.find((check) => check.name === "redis")).toMatchObject({ status: "OK" });
  });

  it("serves /livez and /readyz (core/probes.ts) beside /health, with Redis and the feed shown", async () => {
    const live = await fetch(`${service.url}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ status: "ALIVE" });
    const ready = await fetch(`${service.url}/readyz`);
    const body = (await ready.json()) as { status: string; reasons: string[]; checks: { name: string; status: string }[] };
    expect(ready.status).toBe(200);
    expect(body).toMatchObject({ status: "READY", reasons: [] });
    expect(body.checks.map((check) => check.name)).toEqual(expect.arrayContaining(["supergraph", "database", "redis", "feed"]));
  });
});
