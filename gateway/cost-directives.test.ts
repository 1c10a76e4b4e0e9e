import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BETS_PER_TRANSACTION } from "../core/arguments.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { listSizeFindings } from "../scripts/schema-list-sizes.ts";
import { composeSupergraph } from "../scripts/supergraph.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { followSupergraphPrices, pricedApiSchemaOf, pricesOf, schemaPricesOf, unsizedListFields } from "./cost-directives.ts";
import { DEFAULT_QUERY_LIMITS, measureOperation } from "./limits.ts";
import { createGateway, type Gateway } from "./server.ts";

// Prices live in the subgraphs' SDL (issue 25 item 1): a team adds a list field with its
// @listSize and @cost in its own SDL, composes, and the gateway prices it with no gateway edit;
// the same field without a size fails schema:check, which names it.

const HISTORY_SDL = readFileSync("subgraphs/history/history.graphql", "utf8");
/** A new field of the history subgraph, as a team would write it (the fixture SDL of this test). */
const RECENT_BETS = `
  "The newest bets of every wallet, newest first; \`first\` is 1..100."
  recentBets(
    "How many bets, 1..100."
    first: Int = 10
  ): [Bet!]!`;

function historyWith(field: string): string {
  const withField = HISTORY_SDL.replace("type Query {\n", `type Query {\n${field}\n`);
  expect(withField).not.toBe(HISTORY_SDL);
  return withField;
}

function composedWith(field: string): string {
  const result = composeSupergraph({ history: historyWith(field) });
  if (result.errors) throw new Error(result.errors.join("\n"));
  return result.supergraphSdl;
}

describe("the committed supergraph", () => {
  it("carries every subgraph's prices through composition", () => {
    const prices = schemaPricesOf(readFileSync("supergraph.graphql", "utf8"));
    expect(prices.fieldWeights.get("Query.playerBets")).toBe(10);
    expect(prices.fieldWeights.get("Query.fairnessStats")).toBe(20);
    expect(prices.typeWeights.get("Bet")).toBe(3);
    expect(prices.listSizes.get("Query.playerBets")).toEqual({ slicingArguments: ["first"], sizedFields: ["edges", "nodes"] });
    expect(prices.listSizes.get("Health.checks")).toEqual({ assumedSize: 10 });
  });

  it("sizes betsByTransaction at the cap the history subgraph enforces", () => {
    const prices = schemaPricesOf(readFileSync("supergraph.graphql", "utf8"));
    expect(prices.listSizes.get("Query.betsByTransaction")?.assumedSize).toBe(MAX_BETS_PER_TRANSACTION);
  });

  it("gives every list of objects a size", () => {
    expect(listSizeFindings(readFileSync("supergraph.graphql", "utf8"))).toEqual([]);
  });
});

describe("a list field added in one subgraph's SDL", () => {
  let db: Database;
  let gateway: Gateway;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "priced-field-"));
    const supergraphPath = join(dir, "supergraph.graphql");
    writeFileSync(supergraphPath, composedWith(`${RECENT_BETS} @cost(weight: 10) @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)`));
    // Cost analysis runs before any subgraph or database is asked: nothing needs to answer.
    db = await openDatabase({ url: "postgresql://postgres@127.0.0.1:9/unreachable" });
    const unreachable = "http://127.0.0.1:9/graphql";
    gateway = createGateway({
      db,
      logger: silentLogger(),
      production: true,
      version: "test",
      supergraphPath,
      subgraphUrls: { history: unreachable, results: unreachable, networks: unreachable },
      maxBodyBytes: 65_536,
      health: { maxLagBlocks: 10, maxStalenessSeconds: 60 },
    });
    url = `${(await gateway.listen("127.0.0.1", 0)).url}/graphql`;
  });
  afterAll(async () => {
    await gateway?.stop();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (query: string) => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
    return {
      status: response.status,
      body: (await response.json()) as { errors?: { extensions?: Record<string, unknown> }[]; extensions?: { cost?: { requested: number } } },
    };
  };

  it("is priced by the gateway from its @cost and @listSize, with no gateway edit", async () => {
    // 1 for the field, 10 for its statement (@cost), 3 per bet (Bet's @cost) times `first`, 1 for the leaf.
    expect((await ask(`{ recentBets(first: 40) { betId } }`)).body.extensions?.cost?.requested).toBe(1 + 10 + 40 * 3 + 1);
    expect((await ask(`{ recentBets(first: 7) { betId } }`)).body.extensions?.cost?.requested).toBe(1 + 10 + 7 * 3 + 1);
    // Without `first`: the slicing argument's default (10).
    expect((await ask(`{ recentBets { betId } }`)).body.extensions?.cost?.requested).toBe(1 + 10 + 10 * 3 + 1);
  });

  it("is refused over the cost limit by the size its slicing argument gives", async () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `r${i}: recentBets(first: 100) { betId }`);
    const { status, body } = await ask(`{ ${aliases.join(" ")} }`);
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", limit: "cost" });
  });
});

describe("the same field without a size", () => {
  it("fails schema:check's list-size rule, naming it", () => {
    const findings = listSizeFindings(composedWith(`${RECENT_BETS} @cost(weight: 10)`));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatch(/^unsized list: Query\.recentBets returns a list of objects without a size/);
  });

  it("is priced as the largest page meanwhile, not as a small list", () => {
    const schema = pricedApiSchemaOf(composedWith(RECENT_BETS));
    expect(pricesOf(schema).listSizes.has("Query.recentBets")).toBe(false);
    expect(unsizedListFields(schema, pricesOf(schema))).toEqual(["Query.recentBets"]);
    const document = parse(`{ recentBets(first: 5) { betId } }`);
    const operation = document.definitions[0] as OperationDefinitionNode;
    // 1 for the field, no statement price, 100 bets of 3, 1 for the leaf: `first` slices nothing it was not told to.
    expect(measureOperation(schema, document, operation, {}, DEFAULT_QUERY_LIMITS).cost).toBe(1 + 100 * 3 + 1);
  });
});

describe("a supergraph the gateway loads", () => {
  it("has its prices attached to its API schema, and its lists without a size named in a warning", () => {
    const warnings: unknown[][] = [];
    const listeners: ((schema: { apiSchema: GraphQLSchema; coreSupergraphSdl: string }) => void)[] = [];
    followSupergraphPrices({ onSchemaLoadOrUpdate: (listener) => listeners.push(listener) }, { warn: (...args: unknown[]) => warnings.push(args) });
    const load = (supergraph: string) => {
      const apiSchema = apiSchemaOf(supergraph);
      for (const listener of listeners) listener({ apiSchema, coreSupergraphSdl: supergraph });
      return apiSchema;
    };
    expect(pricesOf(load(readFileSync("supergraph.graphql", "utf8"))).fieldWeights.get("Query.playerBets")).toBe(10);
    expect(warnings).toEqual([]);
    const updated = load(composedWith(RECENT_BETS));
    expect(pricesOf(updated).listSizes.has("Query.recentBets")).toBe(false);
    expect(warnings).toEqual([[{ unsized: ["Query.recentBets"] }, expect.stringContaining("without @listSize")]]);
  });
});

describe("an argument's @cost", () => {
  it("is charged per call when the argument is given, and only then", () => {
    const schema = pricedApiSchemaOf(
      composedWith(
        `${RECENT_BETS.replace(
          "first: Int = 10\n",
          'first: Int = 10\n    "Only bets at or above this block (read from the primary when a replica lags)."\n    minBlock: Int @cost(weight: 50)\n',
        )} @cost(weight: 10) @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)`,
      ),
    );
    const cost = (query: string) => {
      const document = parse(query);
      return measureOperation(schema, document, document.definitions[0] as OperationDefinitionNode, {}, DEFAULT_QUERY_LIMITS).cost;
    };
    expect(cost(`{ recentBets(first: 5, minBlock: 7) { betId } }`) - cost(`{ recentBets(first: 5) { betId } }`)).toBe(50);
  });
});

describe("sizedFields", () => {
  it("size a connection's lists only when every field returning the connection sizes them", () => {
    const field = `
  "The newest page of bets of every wallet."
  newestBets(
    "Page size, 1..100."
    first: Int = 20
  ): BetConnection! @listSize(slicingArguments: ["first"], sizedFields: ["nodes"], requireOneSlicingArgument: false)`;
    const unsized = listSizeFindings(composedWith(field)).map((finding) => finding.split(" ")[2]);
    expect(unsized).toEqual(["BetConnection.edges"]);
    expect(listSizeFindings(composedWith(field.replace('["nodes"]', '["edges", "nodes"]')))).toEqual([]);
  });
});
