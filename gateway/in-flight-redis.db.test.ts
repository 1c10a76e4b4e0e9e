import type { ServerResponse } from "node:http";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRedisRateLimitStore } from "../core/token-bucket.ts";
import { testConfig } from "../test/config.ts";
import { describeWith, redisService } from "../test/services.ts";
import { requestFrom } from "../test/loopback-request.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { DEFAULT_QUERY_LIMITS } from "./limits.ts";

// A refusal for too many requests in flight (gateway/in-flight.ts) with the points budget in Redis:
// a flood of them must not cost Redis anything (one round trip per refused request would let a
// flood of refusals load the limiter's Redis), while each still says the budget in well-formed
// RateLimit-* headers. Every command the budget's client sends is counted (ioredis sends each one
// through `sendCommand`).

const CAP = 8;
const FLOOD = 60;
const policy = { capacity: 10_000, refillPerSecond: 1_000 };
const prefix = `test:inflight:${process.pid}:${Math.random().toString(36).slice(2)}:`;
const redis = new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
let commands = 0;
const send = redis.sendCommand.bind(redis);
redis.sendCommand = ((...args: Parameters<typeof send>) => {
  commands++;
  return send(...args);
}) as typeof redis.sendCommand;

let releaseHeld: () => void = () => {};
const gate = new Promise<void>((resolve) => {
  releaseHeld = resolve;
});
let entered = 0;
const heldRoute = async (_req: unknown, res: ServerResponse) => {
  entered++;
  await gate;
  if (!res.closed) res.end("released");
};

let t: TestStack;

const from = (localAddress: string, path: string, body?: string) => requestFrom(t.url, localAddress, path, body).answer;

const QUERY = JSON.stringify({ query: "{ networkConfigs { chainId } }" });

const redisServer = await redisService();

describeWith(redisServer, "in-flight refusals with the points budget in Redis", () => {
  beforeAll(async () => {
    await redis.connect();
    t = await startTestStack(
      { bets: 20 },
      {
        protection: {
          limits: DEFAULT_QUERY_LIMITS,
          rateLimit: { store: createRedisRateLimitStore(redis, policy, prefix), policy, trustProxyHops: 0 },
          inFlight: { maxPerClient: CAP, trustProxyHops: 0 },
        },
        web: { routes: { "/held": heldRoute } },
      },
    );
  });
  afterAll(async () => {
    releaseHeld();
    await t?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("answers a flood of refusals without a Redis command, each with the budget as this gateway last saw it", async () => {
    const before = commands;
    const held = Array.from({ length: CAP }, () => from("127.0.0.2", "/held"));
    while (entered < CAP) await new Promise((resolve) => setTimeout(resolve, 10));
    // Each held request paid at the door: the client's bucket is in Redis, and this gateway saw it.
    expect(commands - before).toBeGreaterThanOrEqual(CAP);

    const flooded = commands;
    const paths = ["/graphql", "/schema.graphql", "/health", `/wallets/${t.fixtures.whale}/bets.csv`];
    const refusals = await Promise.all(
      Array.from({ length: FLOOD }, (_, i) => (i % paths.length === 0 ? from("127.0.0.2", "/graphql", QUERY) : from("127.0.0.2", paths[i % paths.length]!))),
    );
    expect(commands - flooded).toBe(0);

    for (const answer of refusals) {
      expect(answer.status).toBe(429);
      expect(answer.headers["retry-after"]).toBe("1");
      expect(answer.headers["ratelimit-limit"]).toBe(String(policy.capacity));
      expect(answer.headers["ratelimit-remaining"]).toMatch(/^\d+$/);
      expect(answer.headers["ratelimit-reset"]).toMatch(/^\d+$/);
      const remaining = Number(answer.headers["ratelimit-remaining"]);
      expect(remaining).toBeLessThanOrEqual(policy.capacity);
      // What the held requests left (8 doors paid, a point each), refilled since: never below it.
      expect(remaining).toBeGreaterThanOrEqual(policy.capacity - CAP);
      expect(Number(answer.headers["ratelimit-reset"])).toBe(Math.ceil((policy.capacity - remaining) / policy.refillPerSecond));
      const body = JSON.parse(answer.body) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]?.extensions.code).toBe("RATE_LIMITED");
    }

    releaseHeld();
    expect((await Promise.all(held)).map((a) => a.status)).toEqual(Array.from({ length: CAP }, () => 200));
    // Another address is not refused: its request pays in Redis as before.
    const other = await from("127.0.0.3", "/graphql", QUERY);
    expect(other.status).toBe(200);
    expect(commands).toBeGreaterThan(flooded);
  });
});
