import { readFileSync } from "node:fs";
import { getIntrospectionQuery, parse, type OperationDefinitionNode } from "graphql";
import { describe, expect, it } from "vitest";
import { apiSchemaOf } from "../core/supergraph.ts";
import { DEFAULT_QUERY_LIMITS, measureOperation, type QueryLimits } from "./limits.ts";

const schema = apiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
const WALLET = "0x000000000000000000000000000000000000dead";

function measure(query: string, variables: Record<string, unknown> = {}, limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition")!;
  return measureOperation(schema, document, operation, variables, limits);
}

const BET_FIELDS = "chainId betId player token stake game clientSeed serverSeedHash status placedBlock placedTx placedAt settledBlock settledTx settledAt refundedBlock refundedTx refundedAt confirmations finalized";

describe("query cost", () => {
  it("charges list fields their page size", () => {
    expect(measure(`{ networkConfigs { name } }`).cost).toBe(10 + 10);
    const ids = Array.from({ length: 100 }, (_, i) => String(i));
    expect(measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { betId result { won } } }`, { ids }).cost).toBe(100 + 100 * 3);
    expect(measure(`{ playerBets(wallet: "${WALLET}", first: 50) { totalCount nodes { betId } } }`).cost).toBe(1 + 1 + 50 + 50);
    expect(measure(`{ playerBets(wallet: "${WALLET}") { edges { node { betId } } } }`).cost).toBe(1 + 20 + 20 * 2);
  });

  it("takes page sizes from variables", () => {
    expect(measure(`query ($n: Int) { playerBets(wallet: "${WALLET}", first: $n) { nodes { betId } } }`, { n: 7 }).cost).toBe(1 + 7 + 7);
  });

  it("admits the heaviest reasonable page and refuses a larger one", () => {
    const page = `playerBets(wallet: "${WALLET}", first: 100) { edges { cursor node { ${BET_FIELDS} } } }`;
    expect(measure(`{ ${page} }`).cost).toBeLessThanOrEqual(5000);
    expect(measure(`{ a: ${page} b: ${page} }`).cost).toBeLessThanOrEqual(5000);
    expect(() => measure(`{ a: ${page} b: ${page} c: ${page} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
  });

  it("keeps introspection open", () => {
    const result = measure(getIntrospectionQuery());
    expect(result.depth).toBeLessThanOrEqual(1);
    expect(result.cost).toBeLessThan(5000);
  });

  it("stops measuring a fragment bomb at the limit instead of expanding it", () => {
    const levels = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { a${i}: networkConfigs { name } ...F${i + 1} ...F${i + 1} }`);
    const bomb = `{ ...F0 } ${levels.join(" ")} fragment F30 on Query { __typename }`;
    expect(() => measure(bomb, {}, { ...DEFAULT_QUERY_LIMITS, maxAliases: 1_000_000 })).toThrow(/cost \d+ exceeds/);
  });
});

describe("depth and aliases", () => {
  it("measures depth as fields nested in fields", () => {
    expect(measure(`{ playerBets(wallet: "${WALLET}") { edges { node { result { proof { piA } } } } } }`).depth).toBe(6);
    expect(() => measure(`{ playerBets(wallet: "${WALLET}") { edges { node { result { proof { piA } } } } } }`, {}, { ...DEFAULT_QUERY_LIMITS, maxDepth: 5 }))
      .toThrow(/depth 6 exceeds the limit of 5/);
  });

  it("counts aliases, through fragments too", () => {
    const thirty = Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(" ");
    expect(measure(`{ ${thirty} }`).aliases).toBe(30);
    expect(() => measure(`{ ${thirty} ...F } fragment F on Query { extra: __typename }`)).toThrow(/aliases 31 exceeds the limit of 30/);
  });
});
