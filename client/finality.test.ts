import { describe, expect, it } from "vitest";
import { betFinality } from "./finality.ts";

// The client's (and the live page's) reading of finality: the service's one rule at the boundary.
describe("betFinality", () => {
  it("is final exactly at the network's confirmations", () => {
    expect(betFinality({ confirmations: "1" }, { confirmations: 2 })).toEqual({
      confirmations: 1n,
      required: 2,
      finalized: false,
      label: "1 of 2 confirmations, not final yet",
    });
    expect(betFinality({ confirmations: "2" }, { confirmations: 2 })).toEqual({
      confirmations: 2n,
      required: 2,
      finalized: true,
      label: "final (2 confirmations)",
    });
    expect(betFinality({ confirmations: "1" }, { confirmations: 1 }).label).toBe("final (1 confirmation)");
  });

  it("never calls a change the head has not reached final", () => {
    expect(betFinality({ confirmations: "0" }, { confirmations: 0 }).finalized).toBe(false);
  });
});
