import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitPolicy, type RateLimitStore } from "./token-bucket.ts";
import { testConfig } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

// One suite over both stores: the in-process one and the Redis one every replica shares.

const policy: RateLimitPolicy = { capacity: 10_000, refillPerSecond: 1_000 };
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
      it("takes costs all or nothing from a full bucket, then refuses with a retry time", async () => {
        // 300 points, one back every 12 s: nothing refills while the loop runs.
        const store = makeStore({ capacity: 300, refillPerSecond: 1 / 12 });
        for (let i = 0; i < 30; i++) {
          const decision = await store.take("a", Date.now(), 10);
          expect(decision.allowed).toBe(true);
          expect(decision.remaining).toBe(290 - 10 * i);
        }
        const refused = await store.take("a", Date.now(), 2);
        expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 3600 });
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(23); // 2 points at one per 12 s
        expect(refused.retryAfterSeconds).toBeLessThanOrEqual(24);
        expect((await store.take("g", Date.now(), 301)).allowed).toBe(false);
        expect((await store.take("g", Date.now(), 300)).allowed).toBe(true);
      });

      it("refills continuously, at the policy's rate", async () => {
        // 20 points a second, a bucket of 20: once empty, 200 ms later about 4 more are there (the
        // bucket is large enough that a refill twice too fast shows).
        // The bounds come from the time this test measured, not from a machine assumed idle.
        const store = makeStore({ capacity: 20, refillPerSecond: 20 });
        let tries = 0;
        while ((await store.take("b", Date.now())).allowed) expect(++tries).toBeLessThanOrEqual(25);
        const emptied = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 200));
        const waited = performance.now() - emptied;
        let allowed = 0;
        for (let i = 0; i < 20; i++) if ((await store.take("b", Date.now())).allowed) allowed++;
        const elapsed = performance.now() - emptied;
        // At least what refilled while the test waited (less one for the clocks' millisecond steps),
        // at most what refilled by the last take (plus one), never more than the bucket holds.
        expect(allowed).toBeGreaterThanOrEqual(Math.min(20, Math.floor(waited / 50)) - 1);
        expect(allowed).toBeLessThanOrEqual(Math.min(20, Math.ceil(elapsed / 50) + 1));
      });

      it("settles: refunds up to the capacity, and charges past zero into a debt of at most the capacity", async () => {
        const store = makeStore({ capacity: 1000, refillPerSecond: 1 / 3600 });
        expect(await store.take("s", Date.now(), 600)).toMatchObject({ allowed: true, remaining: 400 });
        expect(await store.settle("s", Date.now(), -500)).toMatchObject({ allowed: true, remaining: 900 });
        expect(await store.settle("s", Date.now(), -500)).toMatchObject({ remaining: 1000 });
        // The work is done: more than the bucket holds is still charged, as a debt.
        expect(await store.settle("s", Date.now(), 1500)).toMatchObject({ remaining: 0 });
        expect((await store.take("s", Date.now(), 1)).allowed).toBe(false);
        expect(await store.settle("s", Date.now(), -600)).toMatchObject({ remaining: 100 }); // -500 + 600
        expect(await store.settle("s", Date.now(), 5000)).toMatchObject({ remaining: 0 });
        expect(await store.settle("s", Date.now(), -1001)).toMatchObject({ remaining: 1 }); // the debt stopped at -1000
      });

      it("starts a new client at the initial points, at most the largest query, and refills it up to the capacity", async () => {
        // 50 points, 250 a second (full again in 0.2 s), a new client starting with 5.
        const store = makeStore({ capacity: 50, refillPerSecond: 250, initial: 5 });
        expect(await store.take("n", Date.now(), 6)).toMatchObject({ allowed: false, remaining: 5 }); // a first take: nothing refilled yet
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Remembered (the refusal wrote it), so it returns as before: refilled up to the capacity, not past it.
        expect((await store.take("n", Date.now(), 51)).allowed).toBe(false);
        expect((await store.take("n", Date.now(), 50)).allowed).toBe(true);
        // The production shape: a new address's first request may cost the whole initial budget (MAX_QUERY_COST).
        const budget = makeStore({ capacity: 10_000, refillPerSecond: 1_000, initial: 5_000 });
        expect(await budget.take("fresh", Date.now(), 5_000)).toMatchObject({ allowed: true, remaining: 0 });
        expect((await budget.take("other", Date.now(), 5_001)).allowed).toBe(false);
      });

      it("starts at the capacity without an initial value, as before", async () => {
        const store = makeStore({ capacity: 300, refillPerSecond: 1 / 12 });
        expect(await store.take("full", Date.now(), 300)).toMatchObject({ allowed: true, remaining: 0 });
      });

      it("keeps clients apart", async () => {
        const store = makeStore({ capacity: 300, refillPerSecond: 1 / 12 });
        expect((await store.take("c", Date.now(), 300)).allowed).toBe(true);
        expect((await store.take("c", Date.now())).allowed).toBe(false);
        expect((await store.take("d", Date.now())).allowed).toBe(true);
      });
    },
  );

// The in-process store runs on the caller's clock, so whole windows can be simulated exactly.
describe("memory store on a simulated clock", () => {
  it("refills 1 000 points a second up to 10 000", async () => {
    const store = createMemoryRateLimitStore(policy);
    const now = 2_000_000;
    expect((await store.take("b", now, 10_000)).allowed).toBe(true);
    expect((await store.take("b", now + 1, 5)).allowed).toBe(false);
    expect((await store.take("b", now + 100, 100)).allowed).toBe(true); // 100 ms refill 100 points
    expect((await store.take("b", now + 100, 1)).allowed).toBe(false);
    expect((await store.take("b", now + 60_000, 1)).remaining).toBe(9_999);
  });

  it("starts a new client at the initial points; a returning one as before, until it is forgotten", async () => {
    const store = createMemoryRateLimitStore({ ...policy, initial: 5_000 });
    const now = 3_000_000;
    expect(await store.take("n", now, 1)).toMatchObject({ allowed: true, remaining: 4_999 });
    // Refilled to the capacity after 5 s, and it stays there while the client is remembered.
    expect((await store.take("n", now + 5_001, 10_000)).allowed).toBe(true);
    expect((await store.take("n", now + 15_001, 10_000)).allowed).toBe(true); // 10 s later: full again
    // Idle past twice the full refill (plus a second, as the Redis store's key expires): new again.
    expect(await store.take("n", now + 15_001 + 21_001, 1)).toMatchObject({ allowed: true, remaining: 4_999 });
  });
});

describe.skipIf(skipWithout(redisServer))(serviceTitle("redis store shared by gateways whose clocks disagree", redisServer), () => {
  it("holds two replicas 50 ms apart to one budget: the bucket plus the refill over the time taken", async () => {
    // Two gateway replicas charge the same client, alternating, each passing its own clock; B's
    // runs 50 ms ahead of A's. 60 points, 30 a second, 1 point a request.
    const shared: RateLimitPolicy = { capacity: 60, refillPerSecond: 30 };
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
    // The bucket's 60 plus 30 a second for the time the loop took (rounding: one point).
    expect(allowed).toBeLessThanOrEqual(60 + Math.ceil(30 * seconds) + 1);
  });
});
