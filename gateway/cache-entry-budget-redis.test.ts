import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { guardRedis } from "../core/redis.ts";
import { testConfig } from "../test/config.ts";
import { createNewEntryBudget, createSharedNewEntryBudget } from "./cache-entry-budget.ts";

// The new entry budget holds across gateways: every replica counts a client's new entries in the
// rate limit's Redis (whose keys are never evicted), so N replicas do not give it N budgets. While
// that Redis is away each replica falls back to its own count (a bound still holds).

const redis = new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
afterAll(() => redis.disconnect());

describe("new entry budget shared through Redis", () => {
  it("is one budget per client across gateways", async () => {
    await redis.ping(); // connected: a guarded Redis skips one still connecting
    const prefix = `test:cache-entries:${randomUUID()}:`;
    const now = () => 28_333_334 * 60_000 + 1_000;
    const gateway = () =>
      createSharedNewEntryBudget({
        redis: guardRedis(redis, { timeoutMs: 1_000 }),
        local: createNewEntryBudget({ perMinute: 2, now }),
        perMinute: 2,
        prefix,
        now,
      });
    const [a, b] = [gateway(), gateway()];
    const taken = [await a.take("1.2.3.4"), await b.take("1.2.3.4"), await a.take("1.2.3.4"), await b.take("1.2.3.4"), await b.take("5.6.7.8")];
    expect(taken).toEqual([true, true, false, false, true]);
    // Every key the budget wrote expires (a window's count is never left behind).
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
  });

  it("takes amounts across gateways (a new document's tokens)", async () => {
    await redis.ping();
    const prefix = `test:new-document-tokens:${randomUUID()}:`;
    const now = () => 28_333_334 * 60_000 + 1_000;
    const gateway = () =>
      createSharedNewEntryBudget({
        redis: guardRedis(redis, { timeoutMs: 1_000 }),
        local: createNewEntryBudget({ perMinute: 100, now }),
        perMinute: 100,
        prefix,
        now,
      });
    const [a, b] = [gateway(), gateway()];
    expect([await a.take("1.2.3.4", 60), await b.take("1.2.3.4", 40), await a.take("1.2.3.4", 1), await b.take("5.6.7.8", 101)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    for (const key of await redis.keys(`${prefix}*`)) expect(await redis.pttl(key)).toBeGreaterThan(0);
  });

  it("falls back to the gateway's own count while Redis is away", async () => {
    const away = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    away.on("error", () => undefined);
    const budget = createSharedNewEntryBudget({
      redis: guardRedis(away, { timeoutMs: 200 }),
      local: createNewEntryBudget({ perMinute: 1 }),
      perMinute: 1,
    });
    expect([await budget.take("a"), await budget.take("a")]).toEqual([true, false]);
    away.disconnect();
  });
});
