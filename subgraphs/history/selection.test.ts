import { describe, expect, it } from "vitest";
import { infoOf } from "../../test/resolve-info.ts";
import { pageJoinsOf } from "./selection.ts";

// What a page statement joins follows what the query selects of the page's bets.

describe("pageJoinsOf", () => {
  it("joins nothing for a page of bets' own fields", () => {
    expect(pageJoinsOf(infoOf(`{ playerBets(wallet: "0x0") { totalCount nodes { betId network { chainId } } pageInfo { endCursor } } }`))).toEqual({
      network: false,
      result: false,
    });
  });

  it("joins results and networks selected under nodes or edges.node, through fragments and aliases", () => {
    expect(pageJoinsOf(infoOf(`{ playerBets(wallet: "0x0") { nodes { r: result { won } } } }`))).toEqual({ network: false, result: true });
    expect(pageJoinsOf(infoOf(`{ playerBets(wallet: "0x0") { edges { node { network { confirmations } } } } }`))).toEqual({ network: true, result: false });
    expect(
      pageJoinsOf(
        infoOf(
          `{ playerBets(wallet: "0x0") { ...Page } } fragment Page on BetConnection { edges { node { ... on Bet { ...B } } } } fragment B on Bet { network { name } result { proof { piA } } }`,
        ),
      ),
    ).toEqual({ network: true, result: true });
  });

  it("joins nothing without an operation (a statement captured by calling the resolver)", () => {
    expect(pageJoinsOf({} as Parameters<typeof pageJoinsOf>[0])).toEqual({ network: false, result: false });
  });
});
