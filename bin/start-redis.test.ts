import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  service = await startService({ env: { REDIS_URL: redis.url, DEMO_MODE: "fixtures", DEMO_BETS: "20" } });
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
  it("charges the rate limit in Redis: the bucket there is the one the headers count down", async () => {
    const first = await ask("{ networkConfigs { chainId } }");
    const second = await ask("{ networkConfigs { chainId } }");
    expect([first.status, second.status]).toEqual([200, 200]);
    const buckets = await client.keys("ratelimit:*");
    expect(buckets).toHaveLength(1);
    const tokens = Number(await client.hget(buckets[0]!, "tokens"));
    // The bucket is stored as the last charge left it: exactly what that answer reported.
    expect(Math.floor(tokens)).toBe(second.remaining);
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
});
