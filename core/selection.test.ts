import { describe, expect, it } from "vitest";
import { infoOf } from "../test/resolve-info.ts";
import { asksOnlyTotalCount } from "./selection.ts";

// A connection asked nothing but its totalCount reads no page (issue 21): anything else selected,
// however it is spelled, must still read it.
describe("asksOnlyTotalCount", () => {
  it("holds for totalCount and __typename alone, aliased or through fragments", () => {
    expect(asksOnlyTotalCount(infoOf(`{ playerBets(wallet: "0x0") { a: totalCount b: totalCount __typename } }`))).toBe(true);
    expect(asksOnlyTotalCount(infoOf(`{ bets { ... on BetConnection { totalCount } ...C } } fragment C on BetConnection { totalCount }`))).toBe(true);
    expect(asksOnlyTotalCount(infoOf(`{ bets { ...C } } fragment C on BetConnection { totalCount ...C }`))).toBe(true);
  });

  it("does not hold when anything else is selected, however it is spelled", () => {
    expect(asksOnlyTotalCount(infoOf(`{ bets { totalCount: nodes { betId } } }`))).toBe(false);
    expect(asksOnlyTotalCount(infoOf(`{ bets { totalCount edges { cursor } } }`))).toBe(false);
    expect(asksOnlyTotalCount(infoOf(`{ bets { totalCount ... on BetConnection { pageInfo { hasNextPage } } } }`))).toBe(false);
    expect(asksOnlyTotalCount(infoOf(`{ bets { totalCount nodes @include(if: false) { betId } } }`))).toBe(false);
    expect(asksOnlyTotalCount(infoOf(`{ bets { totalCount ...Unknown } }`))).toBe(false);
    // One response field merged from two nodes: the page is read when either selects more.
    expect(asksOnlyTotalCount(infoOf(`{ p: playerBets(wallet: "0x0") { totalCount } p: playerBets(wallet: "0x0") { nodes { betId } } }`, 2))).toBe(false);
  });

  it("does not hold without field nodes (a statement captured by calling the resolver)", () => {
    expect(asksOnlyTotalCount({} as Parameters<typeof asksOnlyTotalCount>[0])).toBe(false);
  });
});
