import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { DEFAULT_QUERY_LIMITS } from "./limits.ts";
import { createMemoryRateLimitStore } from "./rate-limit.ts";

// The gateway charges each client: RateLimit-* headers on every answer, then 429 RATE_LIMITED
// with Retry-After. Behind one trusted proxy, clients are told apart by X-Forwarded-For.

let t: TestStack;
const policy = { limit: 5, windowSeconds: 60 };
beforeAll(async () => {
  t = await startTestStack(
    { bets: 120 },
    {
      protection: { limits: DEFAULT_QUERY_LIMITS, rateLimit: { store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 1 } },
    },
  );
});
afterAll(async () => {
  await t?.close();
});

const post = (headers: Record<string, string> = {}) =>
  fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query: "{ networkConfigs { chainId } }" }),
  });

describe("rate limiting", () => {
  it("counts down, then answers 429 with Retry-After and RATE_LIMITED", async () => {
    for (let i = 0; i < 5; i++) {
      const response = await post();
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-limit")).toBe("5");
      expect(response.headers.get("ratelimit-remaining")).toBe(String(4 - i));
      await response.arrayBuffer();
    }
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { errors: { message: string; extensions: { code: string; retryAfterSeconds: number } }[] };
    expect(body.errors[0]!.extensions.code).toBe("RATE_LIMITED");
    expect(body.errors[0]!.extensions.retryAfterSeconds).toBe(Number(refused.headers.get("retry-after")));
  });

  it("charges another client behind the trusted proxy separately, and never limits /health", async () => {
    const other = await post({ "x-forwarded-for": "203.0.113.7" });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
  });
});
