import { type FieldNode, type FragmentDefinitionNode, Kind, type OperationDefinitionNode, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { pageJoinsOf } from "./selection.ts";

// What a page statement joins follows what the query selects of the page's bets.

/** The resolve info of the document's first root field (or its first `fields` root fields, merged as one), as far as selection.ts reads it. */
function infoOf(query: string, fields = 1) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  return { fieldNodes: operation.selectionSet.selections.slice(0, fields) as FieldNode[], fragments };
}

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
