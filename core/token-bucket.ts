import { Redis } from "ioredis";
import type { Logger } from "./logger.ts";
import type { GuardedRedis } from "./redis.ts";

// Per-client budgets of points: a bucket holding at most `capacity` points, refilled continuously
// at `refillPerSecond`. A request takes what it is priced at (the gateway: its operation's cost,
// docs/reference/limits.md#rate-limit), all or nothing, and is later settled with what it really
// cost: a refund, or a charge that may leave the bucket in debt (down to -capacity) because the
// work is already done. A bucket never seen before (or forgotten: idle long enough to be full
// twice over) starts with `initial` points, not `capacity`, and fills to capacity by the refill:
// a crowd of fresh addresses cannot each spend a whole budget at once. One interface, two stores:
// Redis (shared by every replica, atomic in a Lua script, on Redis's clock) and in-process memory
// (the embedded default, on the caller's `now`). Any tier charges it through `take(key, now, cost)`.

export interface RateLimitPolicy {
  /** Points the bucket holds when full: what a client may spend at once after idling. */
  capacity: number;
  /** Points added back per second, continuously. */
  refillPerSecond: number;
  /** Points a new (or forgotten) client's bucket starts with, at most `capacity`; default `capacity`. */
  initial?: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Whole points left in the bucket after this charge (never below 0 here; a debt reads 0). */
  remaining: number;
  /** The bucket's points after this charge, a debt below 0 (what a process remembers of it: gateway/points-budget.ts). */
  points: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until this cost could be paid (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimitStore {
  /** Charges `cost` points (default 1) to `key`, all or nothing; `now` is the caller's clock in ms (a store may keep its own). */
  take(key: string, now: number, cost?: number): Promise<RateLimitDecision>;
  /**
   * Settles a charge once the real cost is known: `delta` points more (positive, always applied,
   * down to a debt of -capacity) or back (negative, up to capacity).
   */
  settle(key: string, now: number, delta: number): Promise<RateLimitDecision>;
}

/** How a bucket with `points` left answers (also for callers that adjust a decision locally). */
export function decide(policy: RateLimitPolicy, points: number, allowed: boolean, cost = 1): RateLimitDecision {
  return {
    allowed,
    remaining: Math.max(0, Math.floor(points)),
    points,
    resetSeconds: Math.max(0, Math.ceil((policy.capacity - points) / policy.refillPerSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - points) / policy.refillPerSecond)),
  };
}

/** Points a new or forgotten bucket starts with. */
const initialPoints = (policy: RateLimitPolicy): number => Math.min(policy.capacity, policy.initial ?? policy.capacity);

/** How long an idle bucket is remembered: until it would be full again, twice over (a debt of -capacity), plus a second. */
const forgetAfterMs = (policy: RateLimitPolicy): number => Math.ceil((2 * policy.capacity * 1000) / policy.refillPerSecond) + 1000;

export function createMemoryRateLimitStore(policy: RateLimitPolicy, maxKeys = 100_000): RateLimitStore {
  const buckets = new Map<string, { points: number; at: number }>();
  const perMs = policy.refillPerSecond / 1000;
  const initial = initialPoints(policy);
  // Forgotten as the Redis store's keys expire, so both stores start a returning idle client alike.
  const forgetMs = forgetAfterMs(policy);
  const apply = (key: string, now: number, change: (points: number) => { points: number; allowed: boolean }, cost: number) => {
    const known = buckets.get(key);
    const bucket = known && now - known.at <= forgetMs ? known : { points: initial, at: now };
    const refilled = Math.min(policy.capacity, bucket.points + Math.max(0, now - bucket.at) * perMs);
    const { points, allowed } = change(refilled);
    buckets.delete(key); // re-insert: Map order is then least recently used first
    buckets.set(key, { points, at: Math.max(now, bucket.at) });
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return decide(policy, points, allowed, cost);
  };
  return {
    async take(key, now, cost = 1) {
      return apply(key, now, (points) => (points >= cost ? { points: points - cost, allowed: true } : { points, allowed: false }), cost);
    },
    async settle(key, now, delta) {
      return apply(key, now, (points) => ({ points: Math.max(-policy.capacity, Math.min(policy.capacity, points - delta)), allowed: true }), 0);
    },
  };
}

// KEYS[1] bucket; ARGV: capacity, refill per ms, ttl ms, cost, mode ("take": all or nothing;
// "settle": always, between -capacity and capacity), initial points (a missing key's). Returns { allowed, points×1000 }.
// The clock is Redis's own (TIME), never a gateway's: replicas whose clocks disagree would each
// see time pass when the other charged the bucket, and refill it again and again. Redis 7
// replicates scripts by their effects, so a script may read TIME before it writes.
const CHARGE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local points = tonumber(bucket[1]) or tonumber(ARGV[6])
local at = tonumber(bucket[2]) or now
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
points = math.min(capacity, points + elapsed * per_ms)
local cost = tonumber(ARGV[4]) or 1
local allowed = 0
if ARGV[5] == 'settle' then
  points = math.max(-capacity, math.min(capacity, points - cost))
  allowed = 1
elseif points >= cost then
  points = points - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(points), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { allowed, math.floor(points * 1000) }`;

/**
 * The bucket in Redis, shared by every replica. It ignores the caller's `now`: the script reads
 * Redis's clock, the one clock every replica shares. A key lives until its bucket would be full
 * again (twice that, for a debt), so an idle client's key goes away by itself (and it starts again
 * at `initial`).
 */
export function createRedisRateLimitStore(redis: Redis | GuardedRedis, policy: RateLimitPolicy, prefix = "ratelimit:"): RateLimitStore {
  const perMs = policy.refillPerSecond / 1000;
  const ttlMs = forgetAfterMs(policy);
  const initial = initialPoints(policy);
  const evaluate = (client: Redis, key: string, cost: number, mode: string) =>
    client.eval(CHARGE_SCRIPT, 1, `${prefix}${key}`, policy.capacity, perMs, ttlMs, cost, mode, initial);
  const charge = async (key: string, cost: number, mode: "take" | "settle") => {
    const reply = redis instanceof Redis ? await evaluate(redis, key, cost, mode) : await redis.run((client) => evaluate(client, key, cost, mode));
    const [allowed, milliPoints] = reply as [number, number];
    return decide(policy, milliPoints / 1000, allowed === 1, mode === "take" ? cost : 0);
  };
  return {
    take: (key, _now, cost = 1) => charge(key, cost, "take"),
    settle: (key, _now, delta) => charge(key, delta, "settle"),
  };
}

/**
 * The shared store while it answers, else an in-process one: a request is never slowed by the
 * limiter's storage beyond the shared store's deadline (a GuardedRedis fails at once while Redis
 * is known to be away), and never goes unlimited. While in process, each replica limits on its
 * own, so a client's budget is at most replicas × the policy. The switch each way is logged once.
 */
export function createFallbackRateLimitStore(options: { shared: RateLimitStore; local: RateLimitStore; logger: Logger }): RateLimitStore {
  let local = false;
  const run = async (charge: (store: RateLimitStore) => Promise<RateLimitDecision>) => {
    try {
      const decision = await charge(options.shared);
      if (local) options.logger.info("rate limit: shared store available again");
      local = false;
      return decision;
    } catch (error) {
      if (!local)
        options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "rate limit: shared store unavailable, limiting in process");
      local = true;
      return charge(options.local);
    }
  };
  return {
    take: (key, now, cost) => run((store) => store.take(key, now, cost)),
    settle: (key, now, delta) => run((store) => store.settle(key, now, delta)),
  };
}
