import type { IncomingMessage } from "node:http";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { clientAddress, createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitPolicy, type RateLimitStore } from "./rate-limit.ts";

// One suite over both stores: the in-process one and the Redis one every replica shares.

const policy: RateLimitPolicy = { limit: 300, windowSeconds: 10 };
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true });
const prefix = `test:ratelimit:${process.pid}:${Date.now()}:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const stores: [string, (custom?: RateLimitPolicy) => RateLimitStore][] = [
  ["memory", (custom = policy) => createMemoryRateLimitStore(custom)],
  ["redis", (custom = policy) => createRedisRateLimitStore(redis, custom, `${prefix}${Math.random()}:`)],
];

describe.each(stores)("%s store", (_name, makeStore) => {
  it("allows the limit at once, then refuses with a retry time", async () => {
    const store = makeStore();
    const now = 1_000_000;
    for (let i = 0; i < 300; i++) {
      const decision = await store.take("a", now);
      expect(decision.allowed).toBe(true);
      expect(decision.remaining).toBe(299 - i);
    }
    const refused = await store.take("a", now);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(refused.resetSeconds).toBe(10);
  });

  it("refills continuously: 30 requests a second at this policy", async () => {
    const store = makeStore();
    const now = 2_000_000;
    for (let i = 0; i < 300; i++) await store.take("b", now);
    expect((await store.take("b", now + 10)).allowed).toBe(false);
    expect((await store.take("b", now + 100)).allowed).toBe(true); // 100 ms refill 3 tokens
    expect((await store.take("b", now + 10_100)).remaining).toBe(299);
  });

  it("caps a burst below the window's budget while keeping the steady rate", async () => {
    const burstPolicy: RateLimitPolicy = { limit: 300, windowSeconds: 10, burst: 60 };
    const store = makeStore(burstPolicy);
    const now = 4_000_000;
    let allowed = 0;
    for (let i = 0; i < 100; i++) if ((await store.take("e", now)).allowed) allowed++;
    expect(allowed).toBe(60);
    // Over the next 10 s the refill adds the window's 300.
    for (let ms = 100; ms <= 10_000; ms += 100) for (let i = 0; i < 5; i++) if ((await store.take("e", now + ms)).allowed) allowed++;
    expect(allowed).toBe(360);
  });

  it("keeps clients apart", async () => {
    const store = makeStore();
    for (let i = 0; i < 301; i++) await store.take("c", 3_000_000);
    expect((await store.take("d", 3_000_000)).allowed).toBe(true);
  });
});

describe("clientAddress", () => {
  const request = (peer: string, forwarded?: string) =>
    ({ socket: { remoteAddress: peer }, headers: forwarded ? { "x-forwarded-for": forwarded } : {} }) as unknown as IncomingMessage;

  it("charges the peer when no proxy is trusted, whatever X-Forwarded-For claims", () => {
    expect(clientAddress(request("10.0.0.1", "1.2.3.4"), 0)).toBe("10.0.0.1");
  });
  it("takes the address the trusted proxy appended, not the client-written left end", () => {
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 203.0.113.7"), 1)).toBe("203.0.113.7");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.9"), 2)).toBe("203.0.113.7");
  });
  it("falls back to the peer when the request did not pass the trusted proxies", () => {
    expect(clientAddress(request("10.0.0.1"), 1)).toBe("10.0.0.1");
  });
});
