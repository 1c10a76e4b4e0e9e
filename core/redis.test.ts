import { ReplyError } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
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

/** The outcome of `promise`, and whether it has settled yet (read it at a chosen moment). */
const watch = <T>(promise: Promise<T>) => {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  const done = promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return { state, done };
};
/** Lets every promise reaction and I/O callback queued so far run (no timer is involved). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

// The deadlines run on a fake clock the test moves (only setTimeout is faked: Redis's socket is
// real), so "at the first deadline" and "at once" are facts of the code, not of the machine's load.
afterEach(() => vi.useRealTimers());

describe.skipIf(skip)(serviceTitle("guardRedis", redisServer), () => {
  it("fails the commands in flight together at the first deadline, then fails at once until a PING answers", async () => {
    const guarded = guardRedis(client, { timeoutMs: TIMEOUT_MS, probeIntervalMs: 100 });
    const changes: (RedisFailure | null)[] = [];
    guarded.onChange((failure) => changes.push(failure));
    expect(await guarded.run((r) => r.set("guard:k", "v"))).toBe("OK");

    redis.freeze();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const a = watch(guarded.run((r) => r.get("guard:k")));
      await vi.advanceTimersByTimeAsync(TIMEOUT_MS / 2);
      const b = watch(guarded.run((r) => r.get("guard:k")));
      await vi.advanceTimersByTimeAsync(TIMEOUT_MS / 2 - 1);
      await flush();
      expect([a.state.settled, b.state.settled]).toEqual([false, false]);
      // The first one's deadline: both fail now, the second half its own deadline early.
      await vi.advanceTimersByTimeAsync(1);
      await flush();
      expect(a.state.settled && b.state.settled).toBe(true);
      expect(a.state.error).toBeInstanceOf(RedisUnavailableError);
      expect((a.state.error as RedisUnavailableError).failure).toBe("timed out");
      expect(b.state.error).toBeInstanceOf(RedisUnavailableError);
      expect(guarded.failure()).toBe("timed out");

      // At once: settled without the clock moving.
      const later = watch(guarded.ping());
      await flush();
      expect(later.state.settled).toBe(true);
      expect(later.state.error).toBeInstanceOf(RedisUnavailableError);
    } finally {
      redis.thaw();
    }
    // The probe (every 100 ms of the fake clock) finds Redis back: move the clock until it has.
    const deadline = performance.now() + 5_000;
    while (guarded.failure() !== null) {
      if (performance.now() > deadline) throw new Error("the probe did not find Redis back");
      await vi.advanceTimersByTimeAsync(100);
      await flush();
    }
    vi.useRealTimers();
    expect(await guarded.run((r) => r.get("guard:k"))).toBe("v");
    expect(changes).toEqual(["timed out", null]);
  });

  it("treats an error reply as that command's failure, not an outage", async () => {
    const guarded = guardRedis(client, { timeoutMs: TIMEOUT_MS });
    const failed = watch(guarded.run((r) => r.eval("return redis.call('NO_SUCH_COMMAND')", 0)));
    await failed.done;
    expect(failed.state.error).toBeInstanceOf(ReplyError);
    expect(guarded.failure()).toBeNull();
    expect(await guarded.ping()).toBe("PONG");
  });
});
