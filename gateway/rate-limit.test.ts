import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitPolicy, type RateLimitStore } from "./rate-limit.ts";
import { testConfig } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

// One suite over both stores: the in-process one and the Redis one every replica shares.

const policy: RateLimitPolicy = { limit: 300, windowSeconds: 10 };
// The Redis store's suites need the tests' Redis; without it they say SKIPPED (never under CI).
const redisServer = await redisService();
const redis = new Redis(testConfig.TEST_REDIS_URL, { lazyConnect: true });
const prefix = `test:ratelimit:${process.pid}:${Date.now()}:`;
afterAll(async () => {
  if (skipWithout(redisServer)) return redis.disconnect();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const stores: [string, (custom: RateLimitPolicy) => RateLimitStore][] = [
  ["memory", (custom) => createMemoryRateLimitStore(custom)],
  ["redis", (custom) => createRedisRateLimitStore(redis, custom, `${prefix}${Math.random()}:`)],
];

// On the real clock: the Redis store takes its time from Redis itself (TIME), never from the
// caller. Policies are picked so the few milliseconds a loop takes cannot change the counts.
for (const [storeName, makeStore] of stores)
  describe.skipIf(storeName === "redis" && skipWithout(redisServer))(
    serviceTitle(`${storeName} store`, ...(storeName === "redis" ? [redisServer] : [])),
    () => {
      it("allows the bucket at once, then refuses with a retry time", async () => {
        // 300 an hour: one token every 12 s, nothing refills while the loop runs.
        const store = makeStore({ limit: 300, windowSeconds: 3600 });
        for (let i = 0; i < 300; i++) {
          const decision = await store.take("a", Date.now());
          expect(decision.allowed).toBe(true);
          expect(decision.remaining).toBe(299 - i);
        }
        const refused = await store.take("a", Date.now());
        expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 3600 });
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(11);
        expect(refused.retryAfterSeconds).toBeLessThanOrEqual(12);
      });

      it("refills continuously, at the policy's rate", async () => {
        // 20 a second, bursts of 5: once empty, 200 ms later about 4 more are allowed.
        const store = makeStore({ limit: 20, windowSeconds: 1, burst: 5 });
        let tries = 0;
        while ((await store.take("b", Date.now())).allowed) expect(++tries).toBeLessThanOrEqual(8);
        await new Promise((resolve) => setTimeout(resolve, 200));
        let allowed = 0;
        for (let i = 0; i < 10; i++) if ((await store.take("b", Date.now())).allowed) allowed++;
        expect(allowed).toBeGreaterThanOrEqual(3);
        expect(allowed).toBeLessThanOrEqual(6);
      });

      it("charges a cost of several tokens all or nothing (the CSV export's pages)", async () => {
        const store = makeStore({ limit: 10, windowSeconds: 3600 });
        expect(await store.take("f", Date.now(), 4)).toMatchObject({ allowed: true, remaining: 6 });
        expect(await store.take("f", Date.now(), 6)).toMatchObject({ allowed: true, remaining: 0 });
        const refused = await store.take("f", Date.now(), 2);
        expect(refused).toMatchObject({ allowed: false, remaining: 0 });
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(719); // 2 tokens at one per 360 s
        expect((await store.take("g", Date.now(), 11)).allowed).toBe(false);
        expect((await store.take("g", Date.now(), 10)).allowed).toBe(true);
      });

      it("caps a burst below the window's budget", async () => {
        const store = makeStore({ limit: 300, windowSeconds: 3600, burst: 60 });
        let allowed = 0;
        for (let i = 0; i < 100; i++) if ((await store.take("e", Date.now())).allowed) allowed++;
        expect(allowed).toBe(60);
      });

      it("keeps clients apart", async () => {
        const store = makeStore({ limit: 300, windowSeconds: 3600 });
        for (let i = 0; i < 301; i++) await store.take("c", Date.now());
        expect((await store.take("c", Date.now())).allowed).toBe(false);
        expect((await store.take("d", Date.now())).allowed).toBe(true);
      });
    },
  );

// The in-process store runs on the caller's clock, so whole windows can be simulated exactly.
describe("memory store on a simulated clock", () => {
  it("refills 30 requests a second at 300 per 10 s", async () => {
    const store = createMemoryRateLimitStore(policy);
    const now = 2_000_000;
    for (let i = 0; i < 300; i++) await store.take("b", now);
    expect((await store.take("b", now + 10)).allowed).toBe(false);
    expect((await store.take("b", now + 100)).allowed).toBe(true); // 100 ms refill 3 tokens
    expect((await store.take("b", now + 10_100)).remaining).toBe(299);
  });

  it("keeps the steady rate under a burst cap", async () => {
    const store = createMemoryRateLimitStore({ limit: 300, windowSeconds: 10, burst: 60 });
    const now = 4_000_000;
    let allowed = 0;
    for (let i = 0; i < 100; i++) if ((await store.take("e", now)).allowed) allowed++;
    expect(allowed).toBe(60);
    // Over the next 10 s the refill adds the window's 300.
    for (let ms = 100; ms <= 10_000; ms += 100) for (let i = 0; i < 5; i++) if ((await store.take("e", now + ms)).allowed) allowed++;
    expect(allowed).toBe(360);
  });
});

describe.skipIf(skipWithout(redisServer))(serviceTitle("redis store shared by gateways whose clocks disagree", redisServer), () => {
  it("holds two replicas 50 ms apart to one budget: burst plus the refill over the time taken", async () => {
    // The contract's policy: 300 per 10 s (30 a second), bursts of 60. Two gateway replicas charge
    // the same client, alternating, each passing its own clock; B's runs 50 ms ahead of A's.
    const shared: RateLimitPolicy = { limit: 300, windowSeconds: 10, burst: 60 };
    const keyPrefix = `${prefix}skew:`;
    const replicaA = createRedisRateLimitStore(redis, shared, keyPrefix);
    const replicaB = createRedisRateLimitStore(redis, shared, keyPrefix);
    const started = performance.now();
    let allowed = 0;
    for (let i = 0; i < 200; i++) {
      const decision = i % 2 === 0 ? await replicaA.take("client", Date.now()) : await replicaB.take("client", Date.now() + 50);
      if (decision.allowed) allowed++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    expect(allowed).toBeGreaterThanOrEqual(60);
    // The bucket's 60 plus 30 a second for the time the loop took (rounding: one token).
    expect(allowed).toBeLessThanOrEqual(60 + Math.ceil(30 * seconds) + 1);
  });
});
