// knownHeaders (gateway/points-budget.ts): the budget a refusal in front of it shows, from what
// this process last saw, without asking the store. A budget settled into debt must not be shown
// refilling from zero: it shows 0 until its debt is paid back.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";
import { createPointsBudget } from "./points-budget.ts";

const request = { headers: {}, socket: { remoteAddress: "127.0.0.9" } } as unknown as IncomingMessage;

describe("knownHeaders", () => {
  it("a budget in debt shows 0 remaining until the refill has paid the debt back", async () => {
    const policy = { capacity: 1_000, refillPerSecond: 100 };
    let clock = 1_000_000;
    const budget = createPointsBudget({
      budget: { store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 0, now: () => clock },
      logger: silentLogger(),
    });
    const store = budget.settings!.store;
    await store.take("127.0.0.9", clock, 1_000); // empty
    await store.settle("127.0.0.9", clock, 500); // and 500 in debt
    const remaining = () => Number(new Map(budget.knownHeaders!(request)).get("ratelimit-remaining"));
    expect(remaining()).toBe(0);
    clock += 3_000; // 300 refilled: still 200 in debt
    expect(remaining()).toBe(0);
    clock += 3_000; // 600 refilled: 100 left
    expect(remaining()).toBe(100);
  });
});
