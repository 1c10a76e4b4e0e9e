import type { IncomingMessage, ServerResponse } from "node:http";
import { Redis } from "ioredis";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";
import type { GuardedRedis } from "../core/redis.ts";

// Per-client token buckets: `limit` requests refilled continuously over `windowSeconds`, holding at
// most `burst` (default: the whole limit), so a client that was idle cannot land its whole budget
// at once on a server it shares with everyone else. One
// interface, two stores: Redis (shared by every gateway replica, atomic in a Lua script) and
// in-process memory (the embedded default). The memory store runs on the caller's clock (`now`);
// the Redis store on Redis's, shared by every replica.

export interface RateLimitPolicy {
  limit: number;
  windowSeconds: number;
  /** Bucket capacity: requests allowed at once after idling. Default `limit`. */
  burst?: number;
}

const capacityOf = (policy: RateLimitPolicy) => Math.min(policy.burst ?? policy.limit, policy.limit);

export interface RateLimitDecision {
  allowed: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one more request is allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimitStore {
  /**
   * Charges `cost` tokens (default 1: one request) to `key`, all or nothing; `now` is the caller's
   * clock in ms (a store may keep its own). A CSV export charges its rows this way.
   */
  take(key: string, now: number, cost?: number): Promise<RateLimitDecision>;
}

function decide(policy: RateLimitPolicy, tokensAfter: number, allowed: boolean, cost = 1): RateLimitDecision {
  const perSecond = policy.limit / policy.windowSeconds;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokensAfter)),
    resetSeconds: Math.ceil((capacityOf(policy) - tokensAfter) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - tokensAfter) / perSecond)),
  };
}

export function createMemoryRateLimitStore(policy: RateLimitPolicy, maxKeys = 100_000): RateLimitStore {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = policy.limit / (policy.windowSeconds * 1000);
  return {
    async take(key, now, cost = 1) {
      const bucket = buckets.get(key) ?? { tokens: capacityOf(policy), at: now };
      const tokens = Math.min(capacityOf(policy), bucket.tokens + Math.max(0, now - bucket.at) * perMs);
      const allowed = tokens >= cost;
      const after = allowed ? tokens - cost : tokens;
      buckets.delete(key); // re-insert: Map order is then least recently used first
      buckets.set(key, { tokens: after, at: now });
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      return decide(policy, after, allowed, cost);
    },
  };
}

// KEYS[1] bucket; ARGV: capacity, refill per ms, ttl ms, cost. Returns { allowed, tokens×1000 }.
// The clock is Redis's own (TIME), never a gateway's: replicas whose clocks disagree would each
// see time pass when the other charged the bucket, and refill it again and again. Redis 7
// replicates scripts by their effects, so a script may read TIME before it writes.
const TAKE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local limit = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local tokens = tonumber(bucket[1]) or limit
local at = tonumber(bucket[2]) or now
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
tokens = math.min(limit, tokens + elapsed * per_ms)
local cost = tonumber(ARGV[4]) or 1
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { allowed, math.floor(tokens * 1000) }`;

/**
 * The bucket in Redis, shared by every gateway replica. It ignores the caller's `now`: the
 * script reads Redis's clock, the one clock every replica shares.
 */
export function createRedisRateLimitStore(redis: Redis | GuardedRedis, policy: RateLimitPolicy, prefix = "ratelimit:"): RateLimitStore {
  const perMs = policy.limit / (policy.windowSeconds * 1000);
  const ttlMs = policy.windowSeconds * 2000;
  const evaluate = (client: Redis, key: string, cost: number) => client.eval(TAKE_SCRIPT, 1, `${prefix}${key}`, capacityOf(policy), perMs, ttlMs, cost);
  return {
    async take(key, _now, cost = 1) {
      const reply = redis instanceof Redis ? await evaluate(redis, key, cost) : await redis.run((client) => evaluate(client, key, cost));
      const [allowed, milliTokens] = reply as [number, number];
      return decide(policy, milliTokens / 1000, allowed === 1, cost);
    },
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
  return {
    async take(key, now, cost) {
      try {
        const decision = await options.shared.take(key, now, cost);
        if (local) options.logger.info("rate limit: shared store available again");
        local = false;
        return decision;
      } catch (error) {
        if (!local)
          options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "rate limit: shared store unavailable, limiting in process");
        local = true;
        return options.local.take(key, now, cost);
      }
    },
  };
}

/**
 * Charges each request to its client and answers 429 RATE_LIMITED with Retry-After once the
 * bucket is empty; every response carries RateLimit-* headers. The configured store falls back to
 * an in-process bucket itself (createFallbackRateLimitStore); a store that still throws lets the
 * request through rather than failing it, and the gateway logs it.
 */
export function createRateLimitGuard(options: { store: RateLimitStore; policy: RateLimitPolicy; trustProxyHops: number; logger: Logger }) {
  let warned = 0;
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    let decision: RateLimitDecision;
    try {
      decision = await options.store.take(clientAddress(req, options.trustProxyHops), Date.now());
    } catch (error) {
      if (Date.now() - warned > 10_000) {
        warned = Date.now();
        options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "rate limit store unavailable: not limiting");
      }
      return true;
    }
    res.setHeader("RateLimit-Limit", String(options.policy.limit));
    res.setHeader("RateLimit-Remaining", String(decision.remaining));
    res.setHeader("RateLimit-Reset", String(decision.resetSeconds));
    if (decision.allowed) return true;
    sendJson(
      res,
      429,
      {
        errors: [
          {
            message: `Too many requests: at most ${options.policy.limit} per ${options.policy.windowSeconds} s per client; retry after ${decision.retryAfterSeconds} s`,
            extensions: { code: ErrorCode.RateLimited, retryAfterSeconds: decision.retryAfterSeconds },
          },
        ],
      },
      { "retry-after": String(decision.retryAfterSeconds) },
    );
    return false;
  };
}
