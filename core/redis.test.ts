import { ReplyError } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { createRedisClient, guardRedis, RedisUnavailableError, type RedisFailure } from "./redis.ts";
import { silentLogger } from "./logger.ts";
import { privateRedisServer, serviceTitle, skipWithout } from "../test/services.ts";

// A private redis-server of its own: without the binary the suite says SKIPPED (never under CI).
const redisServer = privateRedisServer;
const skip = skipWithout(redisServer);

// The deadline and the outage state of Redis on a request path, on a private redis-server frozen
// with SIGSTOP (its socket stays open; nothing answers).

const TIMEOUT_MS = 200;
let redis: PrivateRedis;
let client: ReturnType<typeof createRedisClient>;

beforeAll(async () => {
  if (skip) return;
  redis = await createPrivateRedis();
  client = createRedisClient(redis.url, { logger: silentLogger(), role: "test", maxRetriesPerRequest: 1 });
  await eventually(() => client.status === "ready", 10_000, "the private redis");
});
afterAll(async () => {
  if (skip) return;
  redis?.thaw();
  client?.disconnect();
  await redis?.stop();
});

const settle = async <T>(promise: Promise<T>) => {
  const started = performance.now();
  try {
    return { value: await promise, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
};

describe.skipIf(skip)(serviceTitle("guardRedis", redisServer), () => {
  it("fails the commands in flight together at the first deadline, then fails at once until a PING answers", async () => {
    const guarded = guardRedis(client, { timeoutMs: TIMEOUT_MS, probeIntervalMs: 100 });
    const changes: (RedisFailure | null)[] = [];
    guarded.onChange((failure) => changes.push(failure));
    expect(await guarded.run((r) => r.set("guard:k", "v"))).toBe("OK");

    redis.freeze();
    try {
      const first = settle(guarded.run((r) => r.get("guard:k")));
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 2));
      const second = settle(guarded.run((r) => r.get("guard:k")));
      const [a, b] = await Promise.all([first, second]);
      expect(a.error).toBeInstanceOf(RedisUnavailableError);
      expect((a.error as RedisUnavailableError).failure).toBe("timed out");
      expect(b.error).toBeInstanceOf(RedisUnavailableError);
      // The second was released when the first timed out, half its own deadline early.
      expect(b.ms).toBeLessThan(TIMEOUT_MS * 0.9);
      expect(guarded.failure()).toBe("timed out");

      const later = await settle(guarded.ping());
      expect(later.error).toBeInstanceOf(RedisUnavailableError);
      expect(later.ms).toBeLessThan(20);
    } finally {
      redis.thaw();
    }
    await eventually(() => guarded.failure() === null, 5_000, "the probe to find Redis back");
    expect(await guarded.run((r) => r.get("guard:k"))).toBe("v");
    expect(changes).toEqual(["timed out", null]);
  });

  it("treats an error reply as that command's failure, not an outage", async () => {
    const guarded = guardRedis(client, { timeoutMs: TIMEOUT_MS });
    const failed = await settle(guarded.run((r) => r.eval("return redis.call('NO_SUCH_COMMAND')", 0)));
    expect(failed.error).toBeInstanceOf(ReplyError);
    expect(guarded.failure()).toBeNull();
    expect(await guarded.ping()).toBe("PONG");
  });
});
