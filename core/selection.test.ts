import { type FieldNode, type FragmentDefinitionNode, Kind, type OperationDefinitionNode, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { asksOnlyTotalCount } from "./selection.ts";

/** The resolve info of the document's first root field (or its first `fields` root fields, merged as one), as far as selection.ts reads it. */
function infoOf(query: string, fields = 1) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  return { fieldNodes: operation.selectionSet.selections.slice(0, fields) as FieldNode[], fragments };
}

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
