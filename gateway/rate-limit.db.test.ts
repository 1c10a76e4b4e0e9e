import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { DEFAULT_QUERY_LIMITS } from "./limits.ts";
import { REQUEST_POINTS, ROUTE_POINTS } from "./points-budget.ts";

// The gateway charges each client in points: RateLimit-* headers on every answer, then 429
// RATE_LIMITED with Retry-After. Behind one trusted proxy, clients are told apart by
// X-Forwarded-For. A frozen clock: nothing refills while the test runs.

let t: TestStack;
const policy = { capacity: 100, refillPerSecond: 10 };
beforeAll(async () => {
  t = await startTestStack(
    { bets: 120 },
    {
      protection: {
        limits: DEFAULT_QUERY_LIMITS,
        rateLimit: { store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 1, now: () => 5_000_000 },
      },
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

describe("rate limiting in points", () => {
  it("counts down by each answer's actual cost, then answers 429 with Retry-After and RATE_LIMITED", async () => {
    let left = policy.capacity;
    let served = 0;
    for (;;) {
      const response = await post();
      if (response.status !== 200) {
        expect(response.status).toBe(429);
        // Refused at the door (less than REQUEST_POINTS left), or once measured: then the door's fee was paid.
        expect(response.headers.get("ratelimit-remaining")).toBe(String(left >= REQUEST_POINTS ? left - REQUEST_POINTS : left));
        const retryAfter = Number(response.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        const body = (await response.json()) as { errors: { message: string; extensions: { code: string; retryAfterSeconds: number } }[] };
        expect(body.errors[0]!.extensions.code).toBe("RATE_LIMITED");
        expect(body.errors[0]!.extensions.retryAfterSeconds).toBe(retryAfter);
        expect(body.errors[0]!.message).toMatch(/^Rate limited: this request costs \d+ points/);
        break;
      }
      const body = (await response.json()) as { extensions: { cost: { requested: number; actual: number } } };
      left -= body.extensions.cost.actual;
      expect(response.headers.get("ratelimit-limit")).toBe("100");
      expect(response.headers.get("ratelimit-remaining")).toBe(String(left));
      expect(++served).toBeLessThanOrEqual(10);
    }
    expect(served).toBeGreaterThanOrEqual(2);
  });

  it("charges another client behind the trusted proxy separately, /health included (each caller its own budget)", async () => {
    const other = await post({ "x-forwarded-for": "203.0.113.7" });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
    const health = await fetch(`${t.url}/health`, { headers: { "x-forwarded-for": "203.0.113.8" } });
    expect(health.status).toBe(200);
    expect(health.headers.get("ratelimit-remaining")).toBe(String(policy.capacity - ROUTE_POINTS));
    await health.arrayBuffer();
    // The client whose budget ran dry above pays for /health too.
    const dry = await fetch(`${t.url}/health`);
    expect(dry.status).toBe(429);
    await dry.arrayBuffer();
  });

  it("charges an IPv6 client behind the proxy per /64: each new address of it shares one budget, the next /64 has its own", async () => {
    let refusedAfter: number | undefined;
    for (let i = 1; i <= 3 * (policy.capacity / REQUEST_POINTS) && refusedAfter === undefined; i++) {
      const response = await post({ "x-forwarded-for": `2001:db8:1:2::${i.toString(16)}` });
      await response.arrayBuffer();
      if (response.status === 429) refusedAfter = i - 1;
    }
    expect(refusedAfter).toBeGreaterThanOrEqual(2);
    expect(refusedAfter).toBeLessThanOrEqual(policy.capacity / REQUEST_POINTS);
    const neighbour = await post({ "x-forwarded-for": "2001:db8:1:3::1" });
    expect(neighbour.status).toBe(200);
    await neighbour.arrayBuffer();
  });
});
