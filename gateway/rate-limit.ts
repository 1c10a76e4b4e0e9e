import type { IncomingMessage, ServerResponse } from "node:http";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";
import type { RateLimitDecision, RateLimitPolicy, RateLimitStore } from "../core/token-bucket.ts";

export { clientAddress } from "../core/client-address.ts";
export {
  createFallbackRateLimitStore,
  createMemoryRateLimitStore,
  createRedisRateLimitStore,
  type RateLimitDecision,
  type RateLimitPolicy,
  type RateLimitStore,
} from "../core/token-bucket.ts";

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
