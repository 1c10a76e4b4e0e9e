import { readFileSync } from "node:fs";
import { parse, type OperationDefinitionNode } from "graphql";
import { describe, expect, it } from "vitest";
import { actualCost } from "./actual-cost.ts";
import { DEFAULT_QUERY_LIMITS, measureOperation } from "./limits.ts";
import { withoutCostExtension } from "./points-budget.ts";
import { pricedApiSchemaOf } from "./cost-directives.ts";

// The settlement's price: the estimate's model applied to the answer. An answer as large as the
// arguments allow costs what was estimated; a smaller one costs less by exactly the objects missing.

const schema = pricedApiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
const WALLET = '"0x000000000000000000000000000000000000dead"';
const FIELDS = "chainId betId stake status";

function costs(query: string, data: Record<string, unknown>, variables: Record<string, unknown> = {}) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition")!;
  return {
    requested: measureOperation(schema, document, operation, variables, DEFAULT_QUERY_LIMITS).cost,
    actual: actualCost(schema, document, operation, variables, data),
  };
}
const bets = (n: number) => Array.from({ length: n }, (_, i) => ({ chainId: 1, betId: String(i), stake: "1", status: "SETTLED" }));

describe("actualCost", () => {
  it("is the estimate when every list is as long as asked", () => {
    const { requested, actual } = costs(`{ playerBets(wallet: ${WALLET}, first: 20) { totalCount nodes { ${FIELDS} } } }`, {
      playerBets: { totalCount: 500, nodes: bets(20) },
    });
    expect(actual).toBe(requested);
  });

  it("charges a first: 100 page for the bets it returned: 3 points less per bet missing", () => {
    const query = `query ($first: Int) { playerBets(wallet: ${WALLET}, first: $first) { nodes { ${FIELDS} } } }`;
    const full = costs(query, { playerBets: { nodes: bets(100) } }, { first: 100 });
    const three = costs(query, { playerBets: { nodes: bets(3) } }, { first: 100 });
    expect(full.actual).toBe(full.requested);
    expect(three.requested).toBe(full.requested);
    expect(full.actual - three.actual).toBe(97 * 3);
  });

  it("counts objects through aliases, fragments and connections' edges", () => {
    const query = `{ a: betResults(chainId: 1, betIds: ["1", "2", "3"]) { ...f } b: betResults(chainId: 1, betIds: ["4"]) { ...f } } fragment f on Bet { betId status }`;
    const all = costs(query, {
      a: [
        { betId: "1", status: "SETTLED" },
        { betId: "2", status: "SETTLED" },
        { betId: "3", status: "SETTLED" },
      ],
      b: [{ betId: "4", status: "PLACED" }],
    });
    expect(all.actual).toBe(all.requested);
    const found = costs(query, { a: [{ betId: "1", status: "SETTLED" }, null, null], b: [null] });
    expect(all.actual - found.actual).toBe(3 * 3); // three bets not found
  });

  it("still charges the statements of a field that answered null: they ran", () => {
    const query = `{ betResult(chainId: 1, betId: "1") { ${FIELDS} } }`;
    const found = costs(query, { betResult: bets(1)[0]! });
    const missing = costs(query, { betResult: null });
    expect(found.actual - missing.actual).toBe(3); // the Bet object alone
    expect(missing.actual).toBeGreaterThan(0);
  });

  it("charges a filtered count as estimated: it ran whatever it found", () => {
    const query = `{ bets(first: 1, filter: { game: "dice" }) { a: totalCount b: totalCount nodes { betId } } }`;
    expect(costs(query, { bets: { a: 0, b: 0, nodes: [{ betId: "1" }] } })).toEqual({ requested: 4019, actual: 4019 });
  });

  // issue 21: a connection asked only its totalCount reads no page (subgraphs/history's bets and
  // playerBets skip the page statement), so its actual cost holds no page price, however it is priced.
  it("charges no page to a connection asked only its totalCount, through aliases and fragments", () => {
    const scanning = `filter: { game: "dice", token: "0x0000000000000000000000000000000000000001" }`;
    // TABLE_SCAN_COST (2000) estimated for the page, none read: 1 for bets, 1 for its connection object, 1 + 2000 for the count.
    expect(costs(`{ bets(${scanning}) { totalCount } }`, { bets: { totalCount: 0 } })).toEqual({ requested: 4003, actual: 2003 });
    expect(costs(`{ bets(${scanning}) { n: totalCount } }`, { bets: { n: 0 } }).actual).toBe(2003);
    // SCAN_PAGE_COST (200) estimated for a wallet's scanning page, none read.
    const wallet = `playerBets(wallet: ${WALLET}, filter: { game: "dice", placedFrom: "2020-01-01T00:00:00Z" })`;
    expect(
      costs(`{ ${wallet} { ...C __typename } } fragment C on BetConnection { totalCount }`, { playerBets: { totalCount: 0, __typename: "BetConnection" } }),
    ).toEqual({
      requested: 704,
      actual: 504,
    });
    // Anything else selected reads the page, and it is charged as before.
    expect(costs(`{ ${wallet} { totalCount nodes { betId } } }`, { playerBets: { totalCount: 0, nodes: [] } }).actual).toBe(705);
  });
});

describe("withoutCostExtension", () => {
  it("removes the cost, the extensions object when it was alone, and keeps the body's end", () => {
    expect(withoutCostExtension('{"data":{"a":1},"extensions":{"cost":{"requested":17,"actual":14}}}\n')).toBe('{"data":{"a":1}}\n');
    expect(withoutCostExtension('{"data":{"a":1},"extensions":{"other":{"x":1},"cost":{"requested":17,"actual":14}}}')).toBe(
      '{"data":{"a":1},"extensions":{"other":{"x":1}}}',
    );
    expect(withoutCostExtension('{"data":{"cost":{"requested":1}}}\n')).toBe('{"data":{"cost":{"requested":1}}}\n');
    // An answer without the extension (no points plugin) keeps a last root field aliased `cost`.
    expect(withoutCostExtension('{"data":{"a":1,"cost":{"betId":"1"}}}')).toBe('{"data":{"a":1,"cost":{"betId":"1"}}}');
  });
});
