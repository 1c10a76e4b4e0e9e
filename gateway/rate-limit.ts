import type { IncomingMessage, ServerResponse } from "node:http";
import type { Redis } from "ioredis";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";

// Per-client token buckets: `limit` requests refilled continuously over `windowSeconds`, holding at
// most `burst` (default: the whole limit), so a client that was idle cannot land its whole budget
// at once on a server it shares with everyone else. One
// interface, two stores: Redis (shared by every gateway replica, atomic in a Lua script) and
// in-process memory (the embedded default). Both take `now` from the caller so they share tests.

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
  take(key: string, now: number): Promise<RateLimitDecision>;
}

function decide(policy: RateLimitPolicy, tokensAfter: number, allowed: boolean): RateLimitDecision {
  const perSecond = policy.limit / policy.windowSeconds;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokensAfter)),
    resetSeconds: Math.ceil((capacityOf(policy) - tokensAfter) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokensAfter) / perSecond)),
  };
}

export function createMemoryRateLimitStore(policy: RateLimitPolicy, maxKeys = 100_000): RateLimitStore {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = policy.limit / (policy.windowSeconds * 1000);
  return {
    async take(key, now) {
      const bucket = buckets.get(key) ?? { tokens: capacityOf(policy), at: now };
      const tokens = Math.min(capacityOf(policy), bucket.tokens + Math.max(0, now - bucket.at) * perMs);
      const allowed = tokens >= 1;
      const after = allowed ? tokens - 1 : tokens;
      buckets.delete(key); // re-insert: Map order is then least recently used first
      buckets.set(key, { tokens: after, at: now });
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      return decide(policy, after, allowed);
    },
  };
}

// KEYS[1] bucket; ARGV: capacity, refill per ms, now ms, ttl ms. Returns { allowed, tokens×1000 }.
const TAKE_SCRIPT = `
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local limit = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local tokens = tonumber(bucket[1]) or limit
local at = tonumber(bucket[2]) or now
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
tokens = math.min(limit, tokens + elapsed * per_ms)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { allowed, math.floor(tokens * 1000) }`;

export function createRedisRateLimitStore(redis: Redis, policy: RateLimitPolicy, prefix = "ratelimit:"): RateLimitStore {
  const perMs = policy.limit / (policy.windowSeconds * 1000);
  const ttlMs = policy.windowSeconds * 2000;
  return {
    async take(key, now) {
      const [allowed, milliTokens] = (await redis.eval(TAKE_SCRIPT, 1, `${prefix}${key}`, capacityOf(policy), perMs, now, ttlMs)) as [number, number];
      return decide(policy, milliTokens / 1000, allowed === 1);
    },
  };
}

/**
 * The client a request is charged to: the socket's peer, or with `trustProxyHops` proxies in
 * front, the address they appended to X-Forwarded-For (never the client-supplied left end).
 */
export function clientAddress(req: IncomingMessage, trustProxyHops: number): string {
  const peer = req.socket.remoteAddress ?? "unknown";
  if (trustProxyHops <= 0) return peer;
  const header = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(header) ? header.join(",") : header ?? "").split(",").map((part) => part.trim()).filter(Boolean);
  // Fewer entries than trusted hops: the request did not come through them; charge the peer.
  return chain[chain.length - trustProxyHops] ?? peer;
}

/**
 * Charges each request to its client and answers 429 RATE_LIMITED with Retry-After once the
 * bucket is empty; every response carries RateLimit-* headers. A store that fails (Redis down)
 * lets requests through: availability of reads beats strict limiting, and health shows it.
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
    sendJson(res, 429, {
      errors: [{
        message: `Too many requests: at most ${options.policy.limit} per ${options.policy.windowSeconds} s per client; retry after ${decision.retryAfterSeconds} s`,
        extensions: { code: ErrorCode.RateLimited, retryAfterSeconds: decision.retryAfterSeconds },
      }],
    }, { "retry-after": String(decision.retryAfterSeconds) });
    return false;
  };
}
