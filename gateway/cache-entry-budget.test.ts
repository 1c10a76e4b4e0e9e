import { describe, expect, it } from "vitest";
import { createNewEntryBudget } from "./cache-entry-budget.ts";

// New response cache entries per client and minute (gateway/cache-entry-budget.ts).

describe("new entry budget", () => {
  it("gives each client its own budget per minute, refilled when the next minute starts", () => {
    let clock = 28_333_334 * 60_000 + 40_000; // 40 s into a minute
    const budget = createNewEntryBudget({ perMinute: 2, now: () => clock });
    expect([budget.take("a"), budget.take("a"), budget.take("a"), budget.take("b")]).toEqual([true, true, false, true]);
    clock += 19_000; // same minute
    expect(budget.take("a")).toBe(false);
    clock += 1_000; // next minute
    expect([budget.take("a"), budget.take("a"), budget.take("a")]).toEqual([true, true, false]);
  });

  it("takes amounts (a new document's tokens): what does not fit is refused and spends the rest of the minute", () => {
    let clock = 0;
    const budget = createNewEntryBudget({ perMinute: 100, now: () => clock });
    expect([budget.take("a", 60), budget.take("a", 30), budget.take("a", 20), budget.take("a", 1), budget.take("b", 100)]).toEqual([
      true,
      true,
      false,
      false,
      true,
    ]);
    clock = 60_000;
    expect([budget.take("a", 101), budget.take("a", 1)]).toEqual([false, false]);
  });

  it("counts at most maxClients clients a minute: others add nothing until the next (bounded memory)", () => {
    let clock = 0;
    const budget = createNewEntryBudget({ perMinute: 5, maxClients: 2, now: () => clock });
    expect([budget.take("a"), budget.take("b"), budget.take("c"), budget.take("a")]).toEqual([true, true, false, true]);
    clock = 60_000;
    expect(budget.take("c")).toBe(true);
  });
});
