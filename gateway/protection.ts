import type { Redis } from "ioredis";
import type { Config } from "../core/config.ts";
import type { QueryLimits } from "./limits.ts";
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitPolicy, type RateLimitStore } from "./rate-limit.ts";

export interface GatewayProtection {
  limits: QueryLimits;
  rateLimit?: { store: RateLimitStore; policy: RateLimitPolicy; trustProxyHops: number };
}

/** The configured query limits and per-client rate limit (Redis-shared when Redis is configured). */
export function gatewayProtection(config: Config, redis?: Redis): GatewayProtection {
  const policy: RateLimitPolicy = { limit: config.RATE_LIMIT_MAX, windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS, burst: config.RATE_LIMIT_BURST };
  return {
    limits: { maxDepth: config.MAX_QUERY_DEPTH, maxAliases: config.MAX_QUERY_ALIASES, maxCost: config.MAX_QUERY_COST },
    rateLimit: policy.limit === 0 ? undefined : {
      store: redis ? createRedisRateLimitStore(redis, policy) : createMemoryRateLimitStore(policy),
      policy,
      trustProxyHops: config.TRUST_PROXY_HOPS,
    },
  };
}
