import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { loadConfig } from "../core/config.ts";
import { freePort } from "../test/private-postgres.ts";
import { responseCacheStore } from "../bin/wiring.ts";
import { createMemoryResponseCacheStore, RedisResponseCacheStore } from "./response-cache.ts";
import { testConfig } from "../test/config.ts";
import { describeWith, redisService } from "../test/services.ts";

// The stores' bounds: the in-process LRU holds at most so many entries and so many bytes, a Redis
// entry never outlives its maxAge, and a Redis that cannot be reached is a miss, not an error.

const prefix = `test:responsecache-unit:${process.pid}:${Math.random().toString(36).slice(2)}:`;
// Only the suite against a live Redis needs one (skipped, titled SKIPPED, without it; not under CI).
const redisServer = await redisService();

describe("in-process store", () => {
  it("keeps at most maxEntries answers (two store keys each: header and bytes), dropping the least recently used", async () => {
    const store = createMemoryResponseCacheStore({ maxEntries: 3, maxBytes: 1024 * 1024 });
    for (const key of ["a", "b", "c", "d", "e", "f"]) await store.set(key, key, { ttl: 60 });
    await store.get("a"); // used: b is now the oldest
    for (const key of ["g", "h"]) await store.set(key, key, { ttl: 60 });
    const present = await Promise.all(["a", "b", "c", "d", "e", "f", "g", "h"].map(async (key) => (await store.get(key)) !== undefined));
    expect(present).toEqual([true, false, false, true, true, true, true, true]);
  });

  it("keeps at most maxBytes, and never an entry larger than that", async () => {
    const store = createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 100 });
    await store.set("a", "x".repeat(60), { ttl: 60 });
    await store.set("b", "y".repeat(60), { ttl: 60 });
    expect(await store.get("a")).toBeUndefined();
    expect(await store.get("b")).toBe("y".repeat(60));
    await store.set("huge", "z".repeat(101), { ttl: 60 });
    expect(await store.get("huge")).toBeUndefined();
  });

  it("is what the configuration gives without Redis; RESPONSE_CACHE=off gives none", () => {
    expect(responseCacheStore(loadConfig(["gateway"], {}), { logger: silentLogger() })).toBeDefined();
    expect(responseCacheStore(loadConfig(["gateway"], { RESPONSE_CACHE: "off" }), { logger: silentLogger() })).toBeUndefined();
    const redis = new Redis(testConfig.TEST_REDIS_URL, { lazyConnect: true }); // never connected: only the store's type is checked
    expect(responseCacheStore(loadConfig(["gateway"], {}), { redis, logger: silentLogger() })).toBeInstanceOf(RedisResponseCacheStore);
    redis.disconnect();
    expect(() => loadConfig(["gateway"], { RESPONSE_CACHE: "yes" })).toThrow(/RESPONSE_CACHE/);
    expect(() => loadConfig(["gateway"], { RESPONSE_CACHE_MAX_ENTRIES: "0" })).toThrow(/RESPONSE_CACHE_MAX_ENTRIES/);
  });
});

describeWith(redisServer, "Redis store", () => {
  const redis = new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  beforeAll(async () => {
    await redis.connect();
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("expires an entry after its maxAge and stores nothing without one", async () => {
    const store = new RedisResponseCacheStore(redis, { logger: silentLogger(), prefix });
    await store.set("final", "{}", { ttl: 3600 });
    const ttl = await redis.ttl(`${prefix}final`);
    expect(ttl).toBeGreaterThan(3590);
    expect(ttl).toBeLessThanOrEqual(3600);
    expect(await store.get("final")).toBe("{}");
    await store.set("forever", "{}");
    await store.set("zero", "{}", { ttl: 0 });
    expect(await redis.exists(`${prefix}forever`, `${prefix}zero`)).toBe(0);
  });
});

describe("Redis store without its Redis", () => {
  it("answers a miss at once when Redis cannot be reached, and says so once", async () => {
    const port = await freePort(); // nothing listens there
    const unreachable = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1 });
    unreachable.on("error", () => undefined);
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) });
    const store = new RedisResponseCacheStore(unreachable, { logger, prefix, retryAfterMs: 0 });
    try {
      // What a running gateway sees when its Redis goes away: the client retrying in the background.
      while (unreachable.status !== "reconnecting") await new Promise((resolve) => setTimeout(resolve, 20));
      const started = performance.now();
      for (let i = 0; i < 5; i++) {
        expect(await store.get("any")).toBeUndefined();
        await store.set("any", "{}", { ttl: 60 });
      }
      expect(performance.now() - started).toBeLessThan(3000);
      expect(warnings).toEqual(["response cache: redis unavailable, serving uncached"]);
    } finally {
      unreachable.disconnect();
    }
  });
});
