import { readFileSync } from "node:fs";
import { getIntrospectionQuery, parse, type OperationDefinitionNode } from "graphql";
import { describe, expect, it } from "vitest";
import { largestDocumentedRequests } from "../test/largest-request.ts";
import { checkArgumentRanges, DEFAULT_QUERY_LIMITS, measureOperation, type QueryLimits } from "./limits.ts";
import { pricedApiSchemaOf } from "./cost-directives.ts";

const schema = pricedApiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
const WALLET = "0x000000000000000000000000000000000000dead";

function measure(query: string, variables: Record<string, unknown> = {}, limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition")!;
  return measureOperation(schema, document, operation, variables, limits);
}

const BET_FIELDS =
  "chainId betId player token stake game clientSeed serverSeedHash status placedBlock placedTx placedAt settledBlock settledTx settledAt refundedBlock refundedTx refundedAt confirmations finalized";

describe("query cost", () => {
  it("charges rows, lists and statements; scalar leaves cost 1 each where selected, not per row", () => {
    const ids = Array.from({ length: 100 }, (_, i) => String(i));
    const leaves = BET_FIELDS.split(" ").length;
    const one = measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { betId } }`, { ids }).cost;
    expect(measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { ${BET_FIELDS} } }`, { ids }).cost).toBe(one + leaves - 1);
    const few = measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { betId } }`, { ids: ids.slice(0, 10) }).cost;
    const many = measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { betId } }`, { ids }).cost;
    expect(many).toBeGreaterThan(few * 5);
    const withResult = measure(`query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { betId result { won proof { piA } } } }`, { ids }).cost;
    expect(withResult).toBeGreaterThan(many);
  });

  it("takes page sizes from variables, and from variable defaults", () => {
    const seven = measure(`query ($n: Int) { playerBets(wallet: "${WALLET}", first: $n) { nodes { betId } } }`, { n: 7 }).cost;
    expect(measure(`query ($n: Int = 7) { playerBets(wallet: "${WALLET}", first: $n) { nodes { betId } } }`).cost).toBe(seven);
    expect(measure(`{ playerBets(wallet: "${WALLET}", first: 70) { nodes { betId } } }`).cost).toBeGreaterThan(seven * 5);
  });

  it.each(Object.entries(largestDocumentedRequests(schema, 31337)))("admits the largest documented %s, every field at maximum arguments", (_field, query) => {
    const result = measure(query);
    expect(result.cost).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
    expect(result.depth).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxDepth);
  });

  it("admits playerBets(first: 100) with every field and no filter", () => {
    const query = largestDocumentedRequests(schema, 31337).playerBets!.replace(/filter: \{[^}]*\}, /, "");
    expect(query).not.toContain("filter");
    expect(measure(query).cost).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
  });

  it("refuses 30 aliases of maximum pages, even selecting one scalar", () => {
    const pages = Array.from({ length: 30 }, (_, i) => `p${i}: playerBets(wallet: "${WALLET}", first: 100) { nodes { betId } }`);
    expect(() => measure(`{ ${pages.join(" ")} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
    const ids = JSON.stringify(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    const batches = Array.from({ length: 30 }, (_, i) => `b${i}: betResults(chainId: 1, betIds: ${ids}) { betId }`);
    expect(() => measure(`{ ${batches.join(" ")} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
    const counts = Array.from({ length: 30 }, (_, i) => `c${i}: playerBets(wallet: "${WALLET}", first: 1, filter: { game: "dice" }) { totalCount }`);
    expect(() => measure(`{ ${counts.join(" ")} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
  });

  it("prices totalCount under a game or time filter above the counter-backed one", () => {
    // What selecting totalCount adds to the same page.
    const count = (filter: string) =>
      measure(`{ playerBets(wallet: "${WALLET}", first: 1${filter}) { totalCount } }`).cost -
      measure(`{ playerBets(wallet: "${WALLET}", first: 1${filter}) { pageInfo { hasNextPage } } }`).cost +
      1;
    expect(count(`, filter: { chainId: 1, status: [PENDING] }`)).toBe(count(""));
    expect(count(`, filter: { game: "dice" }`)).toBeGreaterThanOrEqual(count("") * 100);
    expect(count(`, filter: { placedFrom: "1" }`)).toBeGreaterThanOrEqual(count("") * 100);
    expect(count(`, filter: { placedTo: "1" }`)).toBeGreaterThanOrEqual(count("") * 100);
  });

  it("prices a page no single index serves in page order (a time range, several statuses, two narrowing filters) like a row count", () => {
    const pageCost = (filter: string) => measure(`{ playerBets(wallet: "${WALLET}", first: 1${filter}) { pageInfo { hasNextPage } } }`).cost;
    // One index each: (player, chainId, …), (player, status, …), (player, game, …).
    for (const single of [`, filter: { chainId: 1 }`, `, filter: { status: [PENDING] }`, `, filter: { game: "dice" }`])
      expect(pageCost(single)).toBe(pageCost(""));
    // The others read the wallet's rows of one index until the page fills (all of them when few match).
    for (const scan of [
      `, filter: { placedFrom: "1" }`,
      `, filter: { placedTo: "1" }`,
      `, filter: { status: [PENDING, REFUNDED] }`,
      `, filter: { game: "dice", status: [SETTLED] }`,
      `, filter: { game: "dice", chainId: 1 }`,
      `, filter: { chainId: 1, status: [PENDING] }`,
    ])
      expect(pageCost(scan), scan).toBeGreaterThanOrEqual(pageCost("") + 190);
  });

  it("refuses 30 aliases of a combined filter that would each scan the wallet's game rows", () => {
    const aliases = Array.from(
      { length: 30 },
      (_, i) => `a${i}: playerBets(wallet: "${WALLET}", first: 1, filter: { game: "dice", status: [SETTLED] }) { nodes { betId } }`,
    );
    expect(() => measure(`{ ${aliases.join(" ")} }`)).toThrow(/cost \d+ exceeds/);
  });

  it("prices fairnessStats as one statement over counters and the unfinalized settlements, its entries as a small list", () => {
    const stats = (args: string) => measure(`{ fairnessStats${args} { game settledBets outcomeHistogram pValue } }`).cost;
    const pending = measure(`{ pendingBetCount(wallet: "${WALLET}") }`).cost;
    // 1 for the field, 20 for its statement, 10 entries (a list no argument bounds), 4 leaves.
    expect(stats("")).toBe(1 + 20 + 10 + 4);
    expect(stats(`(chainId: 1, game: "dice")`)).toBe(stats(""));
    // Every field (docs/reference/limits.md's table): 13 leaves.
    const every =
      "chainId game settledBets wonBets refundedBets totalStake totalPayout observedRtp expectedRtp outcomeHistogram chiSquare pValue finalizedSettledBets";
    expect(measure(`{ fairnessStats { ${every} } }`).cost).toBe(44);
    expect(stats("")).toBeGreaterThan(pending);
    // Thirty of them are still admitted (30 aliases is the alias limit): it reads no history.
    const aliases = Array.from({ length: 30 }, (_, i) => `f${i}: fairnessStats { game settledBets outcomeHistogram pValue }`);
    expect(measure(`{ ${aliases.join(" ")} }`).cost).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
  });

  it("prices bets pages: one index per single filter (with or without a time range); other combinations by what they read", () => {
    const pageCost = (filter: string) => measure(`{ bets(first: 1${filter}) { pageInfo { hasNextPage } } }`).cost;
    const base = pageCost("");
    for (const single of [
      `, filter: { chainId: 1 }`,
      `, filter: { status: [PENDING] }`,
      `, filter: { game: "dice" }`,
      `, filter: { player: "${WALLET}" }`,
      `, filter: { token: "${WALLET}" }`,
      `, filter: { placedFrom: "1", placedTo: "2" }`,
      `, filter: { game: "dice", placedFrom: "1" }`,
    ])
      expect(pageCost(single), single).toBe(base);
    // Two narrowings within one wallet: that wallet's rows at most, as playerBets' scans.
    expect(pageCost(`, filter: { player: "${WALLET}", game: "dice" }`)).toBe(base + 190);
    // Two narrowings (or several statuses) across every wallet: possibly the whole table.
    for (const scan of [
      `, filter: { chainId: 1, game: "dice" }`,
      `, filter: { status: [PENDING, REFUNDED] }`,
      `, filter: { token: "${WALLET}", status: [SETTLED] }`,
    ])
      expect(pageCost(scan), scan).toBeGreaterThanOrEqual(base + 1990);
  });

  it("prices bets' totalCount: counters serve chainId / status (with or without player); anything else counts rows", () => {
    const count = (filter: string) =>
      measure(`{ bets(first: 1${filter}) { totalCount } }`).cost - measure(`{ bets(first: 1${filter}) { pageInfo { hasNextPage } } }`).cost + 1;
    const counter = count("");
    expect(counter).toBeLessThan(10);
    expect(count(`, filter: { chainId: 1 }`)).toBe(counter);
    expect(count(`, filter: { chainId: 1, status: [PENDING], player: "${WALLET}" }`)).toBe(counter);
    expect(count(`, filter: { player: "${WALLET}", game: "dice" }`)).toBe(count(`, filter: { player: "${WALLET}", placedFrom: "1" }`));
    expect(count(`, filter: { player: "${WALLET}", game: "dice" }`)).toBeGreaterThanOrEqual(490);
    expect(count(`, filter: { game: "dice" }`)).toBeGreaterThanOrEqual(1990);
    expect(count(`, filter: { token: "${WALLET}" }`)).toBeGreaterThanOrEqual(1990);
  });

  it("refuses 30 aliases of bets pages, and three table-wide counts", () => {
    const pages = Array.from({ length: 30 }, (_, i) => `p${i}: bets(first: 100) { nodes { betId } }`);
    expect(() => measure(`{ ${pages.join(" ")} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
    const counts = Array.from({ length: 3 }, (_, i) => `c${i}: bets(first: 1, filter: { game: "dice" }) { totalCount }`);
    expect(() => measure(`{ ${counts.join(" ")} }`)).toThrow(/cost \d+ exceeds the limit of 5000/);
  });

  it("prices betsByTransaction as a list of up to 100 bets: 30 aliases with results and proofs are refused", () => {
    const aliases = Array.from(
      { length: 30 },
      (_, i) => `t${i}: betsByTransaction(chainId: 1, txHash: "0x${"ab".repeat(32)}") { betId result { won payout proof { piA piB piC } } }`,
    );
    expect(() => measure(`{ ${aliases.join(" ")} }`)).toThrow(/cost \d+ exceeds/);
  });

  it("prices betsByTransaction as a few index lookups returning up to 100 bets, like betResults of 100 ids", () => {
    const cost = measure(`{ betsByTransaction(chainId: 1, txHash: "0x${"ab".repeat(32)}") { betId } }`).cost;
    const ids = Array.from({ length: 100 }, (_, i) => `"${i + 1}"`).join(", ");
    expect(cost).toBe(measure(`{ betResults(chainId: 1, betIds: [${ids}]) { betId } }`).cost);
  });

  it("keeps introspection open", () => {
    const result = measure(getIntrospectionQuery());
    expect(result.depth).toBeLessThanOrEqual(1);
    expect(result.cost).toBeLessThan(5000);
  });

  it("prices introspection by what it returns: the whole schema several times over is refused", () => {
    // One full introspection answers every type, field and argument (tens of KB); aliased many
    // times in one request it would cost the server megabytes of JSON for the price of a few leaves.
    const full = getIntrospectionQuery();
    const fragments = full.slice(full.indexOf("fragment FullType"));
    const one = measure(`{ __schema { types { ...FullType } } } ${fragments}`);
    expect(one.cost).toBeGreaterThan(Object.keys(schema.getTypeMap()).length); // more than one per type returned
    const aliases = Array.from({ length: 5 }, (_, i) => `s${i}: __schema { types { ...FullType } }`);
    expect(() => measure(`{ ${aliases.join(" ")} } ${fragments}`)).toThrow(/cost \d+ exceeds/);
  });

  it("stops measuring a fragment bomb at the limit instead of expanding it", () => {
    // 20 levels: within the nesting limit (24), so the cost is what stops it.
    const levels = Array.from({ length: 20 }, (_, i) => `fragment F${i} on Query { a${i}: networkConfigs { name } ...F${i + 1} ...F${i + 1} }`);
    const bomb = `{ ...F0 } ${levels.join(" ")} fragment F20 on Query { __typename }`;
    expect(() => measure(bomb, {}, { ...DEFAULT_QUERY_LIMITS, maxAliases: 1_000_000 })).toThrow(/cost \d+ exceeds/);
  });

  it("measures a list of ids that are not strings without throwing (the subgraph refuses them)", () => {
    // Variables are any JSON: String({ toString: false }) throws, which answered HTTP 500 (gateway/fuzz.db.test.ts).
    const query = "query ($a: ChainId!, $b: [UInt256!]!) { betResults(chainId: $a, betIds: $b) { betId } }";
    expect(() => measure(query, { a: 1, b: [{ toString: false }, { toString: false }, 7, "7"] })).not.toThrow();
  });

  it("stops a fragment bomb of scalar leaves too", () => {
    const levels = Array.from({ length: 20 }, (_, i) => `fragment B${i} on Bet { ...B${i + 1} ...B${i + 1} }`);
    const bomb = `{ playerBets(wallet: "${WALLET}", first: 100) { nodes { ...B0 } } } ${levels.join(" ")} fragment B20 on Bet { ${BET_FIELDS} }`;
    expect(() => measure(bomb)).toThrow(/cost \d+ exceeds/);
  });
});

describe("argument ranges, checked before cost", () => {
  const ranges = (query: string, variables: Record<string, unknown> = {}) => {
    const document = parse(query);
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition")!;
    return () => checkArgumentRanges(document, operation, variables);
  };
  const everything = largestDocumentedRequests(schema, 31337);

  it("names `first` outside 1..100, whatever the selection costs", () => {
    for (const first of [0, -1, 101, 3000]) {
      const query = everything.playerBets!.replace("first: 100", `first: ${first}`);
      expect(ranges(query)).toThrow(
        expect.objectContaining({
          message: "first must be from 1 to 100",
          extensions: expect.objectContaining({ code: "BAD_USER_INPUT", argumentName: "first" }),
        }),
      );
    }
    expect(ranges(`query ($n: Int) { playerBets(wallet: "${WALLET}", first: $n) { totalCount } }`, { n: 3000 })).toThrow(/first must be from 1 to 100/);
    expect(ranges(`query ($n: Int = 3000) { playerBets(wallet: "${WALLET}", first: $n) { totalCount } }`)).toThrow(/first must be from 1 to 100/);
    expect(ranges(`{ ...F } fragment F on Query { playerBets(wallet: "${WALLET}", first: 101) { totalCount } }`)).toThrow(/first must be from 1 to 100/);
    expect(ranges(everything.playerBets!)).not.toThrow();
  });

  it("names `betIds` beyond 100 ids", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => String(i + 1));
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 1, betIds: $ids) { ${BET_FIELDS} result { proof { piA } } } }`;
    expect(ranges(query, { ids })).toThrow(
      expect.objectContaining({ message: "betIds takes at most 100 ids", extensions: expect.objectContaining({ argumentName: "betIds" }) }),
    );
    expect(ranges(`{ betResults(chainId: 1, betIds: ${JSON.stringify(ids.slice(0, 101))}) { betId } }`)).toThrow(/betIds takes at most 100 ids/);
    expect(ranges(query, { ids: ids.slice(0, 100) })).not.toThrow();
  });
});

describe("depth and aliases", () => {
  it("measures depth as fields nested in fields", () => {
    expect(measure(`{ playerBets(wallet: "${WALLET}") { edges { node { result { proof { piA } } } } } }`).depth).toBe(6);
    expect(() =>
      measure(`{ playerBets(wallet: "${WALLET}") { edges { node { result { proof { piA } } } } } }`, {}, { ...DEFAULT_QUERY_LIMITS, maxDepth: 5 }),
    ).toThrow(/depth 6 exceeds the limit of 5/);
  });

  it("counts aliases, through fragments too", () => {
    const thirty = Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(" ");
    expect(measure(`{ ${thirty} }`).aliases).toBe(30);
    expect(() => measure(`{ ${thirty} ...F } fragment F on Query { extra: __typename }`)).toThrow(/aliases 31 exceeds the limit of 30/);
  });
});

describe("a repeated operation", () => {
  it("is priced by the schema it is measured against, the same parsed document across a supergraph reload", () => {
    const sdl = readFileSync("supergraph.graphql", "utf8");
    const pricier = sdl.replace(/(\): BetConnection! @join__field\(graph: HISTORY\)) @cost\(weight: 10\)/, "$1 @cost(weight: 50)");
    expect(pricier).not.toBe(sdl);
    const reloaded = pricedApiSchemaOf(pricier);
    // Apollo Server hands every request of one operation the same parsed document.
    const document = parse(`query ($n: Int) { playerBets(wallet: "${WALLET}", first: $n) { totalCount nodes { betId } } }`);
    const operation = document.definitions[0] as OperationDefinitionNode;
    const cost = (of: typeof schema, n: number) => measureOperation(of, document, operation, { n }, DEFAULT_QUERY_LIMITS).cost;
    const before = cost(schema, 7);
    expect(cost(reloaded, 7)).toBe(before + 40);
    expect(cost(schema, 7)).toBe(before);
    expect(cost(schema, 70)).toBeGreaterThan(before);
  });
});
