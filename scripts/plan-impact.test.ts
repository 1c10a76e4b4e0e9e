import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { changeFindings, operationImpacts, recordedOperations } from "./plan-impact.ts";
import { composeSupergraph } from "./supergraph.ts";

// One team, one loop (issue 25 item 4): a subgraph's SDL change checked against the supergraph in
// service, and the recorded operations whose query plans, validity or prices it changes.

const CURRENT = readFileSync("supergraph.graphql", "utf8");
const sdl = (name: string) => readFileSync(`subgraphs/${name}/${name}.graphql`, "utf8");

function edited(name: string, from: string, to: string): string {
  const text = sdl(name);
  expect(text).toContain(from);
  return text.replace(from, to);
}

function compose(overrides: Record<string, string>): string {
  const result = composeSupergraph(overrides);
  if (result.errors) throw new Error(result.errors.join("\n"));
  return result.supergraphSdl;
}

const RECORDED = recordedOperations(
  JSON.stringify({
    format: "apollo-persisted-query-manifest",
    version: 1,
    operations: [
      {
        id: "a1",
        name: "BetGame",
        type: "query",
        body: "query BetGame($c: ChainId!, $b: UInt256!) { betResult(chainId: $c, betId: $b) { game result { won } } }",
      },
      { id: "b2", name: "Heads", type: "query", body: "query Heads { networkConfigs { name indexing { headBlock } } }" },
      { id: "c3", name: "Page", type: "query", body: "query Page($w: Address!) { playerBets(wallet: $w, first: 50) { nodes { betId } } }" },
    ],
  }),
  "recorded.json",
);

describe("a subgraph's SDL change against the supergraph in service", () => {
  it("adding a priced list field: no finding, no recorded operation affected", () => {
    const after = compose({
      history: edited(
        "history",
        "type Query {\n",
        'type Query {\n  "The newest bets, newest first."\n  recentBets("How many, 1..100." first: Int = 10): [Bet!]! @cost(weight: 10) @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)\n',
      ),
    });
    expect(changeFindings(CURRENT, after)).toEqual([]);
    expect(operationImpacts(CURRENT, after, RECORDED).map((i) => i.verdict)).toEqual(["unchanged", "unchanged", "unchanged"]);
  });

  it("serving a field from a second subgraph changes the plans of the operations that ask for it, and only those", () => {
    const after = compose({
      // Both SDL files import @shareable already (the wallet page's shared fields).
      history: edited(
        "history",
        '  "Game id as recorded by the contract."\n  game: String!',
        '  "Game id as recorded by the contract."\n  game: String! @shareable',
      ),
      results: edited(
        "results",
        "  result: BetResult @shareable\n",
        '  result: BetResult @shareable\n  "Game id as recorded by the contract."\n  game: String! @shareable\n',
      ),
    });
    const impacts = operationImpacts(CURRENT, after, RECORDED);
    expect(impacts.map((i) => [i.name, i.verdict])).toEqual([
      ["BetGame", "plan"],
      ["Heads", "unchanged"],
      ["Page", "unchanged"],
    ]);
    // The new plan asks the results subgraph alone.
    expect(impacts[0]!.detail).not.toContain('Fetch(service: "history")');
  });

  it("removing a field: a breaking change, and the operations using it no longer valid", () => {
    const after = compose({
      networks: edited("networks", '  "How far the indexer has read this network."\n  indexing: IndexingStatus!\n', ""),
    });
    expect(changeFindings(CURRENT, after)).toContain("breaking change: FIELD_REMOVED: NetworkConfig.indexing was removed.");
    const heads = operationImpacts(CURRENT, after, RECORDED).find((i) => i.name === "Heads");
    expect(heads).toMatchObject({ verdict: "invalid", detail: expect.stringContaining('Cannot query field "indexing"') });
  });

  it("repricing a field: the recorded operations' prices before and after", () => {
    const after = compose({ history: edited("history", "): BetConnection! @cost(weight: 10)", "): BetConnection! @cost(weight: 30)") });
    const page = operationImpacts(CURRENT, after, RECORDED).find((i) => i.name === "Page");
    expect(page!.costAfter! - page!.costBefore).toBe(20);
  });
});

describe("recorded operations", () => {
  it("reads the client package's operations, each with the fragments it spreads", () => {
    const operations = recordedOperations(readFileSync("client/operations.ts", "utf8"), "client/operations.ts");
    expect(operations.length).toBeGreaterThan(5);
    expect(operations.map((o) => o.name)).toContain("PlayerBets");
  });
});
