import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, print, visit } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { startTestStack, testGatewaySettings, type TestStack } from "../test/stack.ts";
import { createGateway, HEALTH_SUBGRAPH, type Gateway } from "./server.ts";
import { fieldOwnersOf, singleOwnerOf } from "./single-subgraph.ts";
import { composeSupergraph } from "../scripts/supergraph.ts";
import type { OperationDefinitionNode } from "graphql";
import type { RunningHttpServer } from "../core/http.ts";

// Operations one subgraph answers whole skip the query plan (gateway/single-subgraph.ts). The
// answers must be the plan's, byte for byte — data, errors, status, Cache-Control — for the
// contract's queries, for generated selections, and for every kind of error.

const SUPERGRAPH = readFileSync(new URL("../supergraph.graphql", import.meta.url), "utf8");
/** The benchmarked wallet page (bench/common.ts PLAYER_BETS): bets with their network and result. */
const WALLET_PAGE = `query WalletPage($w: Address!) { playerBets(wallet: $w, first: 50) { totalCount
  nodes { chainId betId player stake game status placedBlock network { chainId name confirmations }
    result { outcome won payout proof { piA publicSignals verified } } }
  pageInfo { hasNextPage endCursor } } }`;
const schema = apiSchemaOf(SUPERGRAPH);
const owners = fieldOwnersOf(SUPERGRAPH, new Set([HEALTH_SUBGRAPH]));
const ownerOf = (query: string) => {
  const document = parse(query);
  return singleOwnerOf(schema, owners, document, document.definitions.find((d) => d.kind === "OperationDefinition") as OperationDefinitionNode);
};

describe("which operations one subgraph answers whole", () => {
  it("names the owner of single-subgraph operations", () => {
    expect(ownerOf(`{ betResults(chainId: 1, betIds: ["1"]) { betId result { outcome proof { piA verified } } } }`)).toBe("results");
    expect(ownerOf(`{ networkConfigs { name contracts { address } indexing { lagBlocks } } }`)).toBe("networks");
    expect(ownerOf(`query($w: Address!) { playerBets(wallet: $w) { totalCount nodes { betId status network { chainId } } pageInfo { endCursor } } }`)).toBe(
      "history",
    );
    expect(
      ownerOf(`query Q($s: Boolean!) { betResults(chainId: 1, betIds: ["1"]) { __typename ...F result @skip(if: $s) { won } } } fragment F on Bet { betId }`),
    ).toBe("results");
  });

  it("counts a field several subgraphs resolve (@shareable) as each one's: a wallet page with networks and results is history's", () => {
    expect(ownerOf(WALLET_PAGE)).toBe("history");
    expect(ownerOf(`query($w: Address!) { playerBets(wallet: $w) { nodes { betId result { won } } } }`)).toBe("history");
    expect(ownerOf(`query($w: Address!) { playerBets(wallet: $w) { edges { node { network { name confirmations } } } } }`)).toBe("history");
    expect(ownerOf(`{ betResults(chainId: 1, betIds: ["1"]) { result { proof { verified } } } }`)).toBe("results");
    expect(ownerOf(`{ networkConfigs { name confirmations } }`)).toBe("networks");
  });

  it("leaves to the plan what spans subgraphs, introspects, or asks health", () => {
    expect(ownerOf(`query($w: Address!) { playerBets(wallet: $w) { nodes { network { name contracts { address } } } } }`)).toBeUndefined();
    expect(ownerOf(`query($w: Address!) { playerBets(wallet: $w) { nodes { network { indexing { lagBlocks } } } } }`)).toBeUndefined();
    expect(ownerOf(`{ networkConfigs { name } betResults(chainId: 1, betIds: ["1"]) { betId } }`)).toBeUndefined();
    expect(ownerOf(`{ __schema { queryType { name } } }`)).toBeUndefined();
    expect(ownerOf(`{ betResults(chainId: 1, betIds: ["1"]) { betId } __type(name: "Bet") { name } }`)).toBeUndefined();
    expect(ownerOf(`{ health { status } }`)).toBeUndefined();
    expect(ownerOf(`query A { networkConfigs { name } } query B { networkConfigs { chainId } }`)).toBeUndefined();
    expect(ownerOf(`{ betResults(chainId: 1, betIds: ["1"]) { betId status } }`)).toBeUndefined();
  });
});

let t: TestStack;
let planned: Gateway;
let plannedHttp: RunningHttpServer;
beforeAll(async () => {
  t = await startTestStack({ bets: 80 }, { production: true });
  // The same subgraphs behind a gateway that plans every operation.
  planned = createGateway({
    db: t.db,
    logger: silentLogger(),
    ...testGatewaySettings({ production: true, subgraphUrls: t.stack.subgraphUrls, planEveryOperation: true }),
  });
  plannedHttp = await planned.listen("127.0.0.1", 0);
});
afterAll(async () => {
  await planned?.stop();
  await t?.close();
});

async function post(url: string, body: unknown) {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, cacheControl: response.headers.get("cache-control"), body: await response.text() };
}

async function subgraphOperations(name: string): Promise<string> {
  return (await (await fetch(t.stack.subgraphUrls[name]!.replace("/graphql", "/metrics"))).text())
    .split("\n")
    .filter((line) => line.startsWith("graphql_requests_total"))
    .join("\n");
}

describe("answers without the plan", () => {
  it("go to the owning subgraph as the client wrote them", async () => {
    const before = await subgraphOperations("results");
    const ids = [t.fixtures.sampleSettled!.betId];
    const { body } = await post(t.url, {
      query: `query OwnedByResults($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`,
      variables: { ids },
      operationName: "OwnedByResults",
    });
    expect(JSON.parse(body).data.betResults).toHaveLength(1);
    expect(before).not.toContain('operation="OwnedByResults"');
    // The plan would have named it OwnedByResults__results__0.
    expect(await subgraphOperations("results")).toContain('graphql_requests_total{operation="OwnedByResults",outcome="ok",service="subgraph-results"} 1');
  });

  it("hand an answer with errors to the plan as its fetch's answer: the subgraph runs the operation once", async () => {
    const query = `query UnknownChain { networkConfigs(chainId: 5) { name } }`;
    const { body } = await post(t.url, { query, operationName: "UnknownChain" });
    expect(JSON.parse(body).errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT" });
    const counted = (await subgraphOperations("networks")).split("\n").filter((line) => line.includes("UnknownChain"));
    expect(counted).toEqual(['graphql_requests_total{operation="UnknownChain",outcome="error",service="subgraph-networks"} 1']);
  });

  const ids = () => [t.fixtures.sampleSettled!.betId, "1", "2", "3", "999999999", "1"];
  const cases: [string, string, () => Record<string, unknown>][] = [
    [
      "bet results with proofs",
      `query($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { outcome won payout proof { piA piB piC publicSignals verified solidityCalldata } } } }`,
      () => ({ ids: ids() }),
    ],
    [
      "aliases, fragments, __typename, @include",
      `query($ids: [UInt256!]!, $yes: Boolean!) { a: betResults(chainId: 31337, betIds: $ids) { __typename id: betId ...R } b: betResults(chainId: 31337, betIds: ["1"]) { betId result @include(if: $yes) { won } } } fragment R on Bet { result { ... on BetResult { payout } } }`,
      () => ({ ids: ids(), yes: true }),
    ],
    [
      "more than 100 ids (BAD_USER_INPUT)",
      `query($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`,
      () => ({ ids: Array.from({ length: 101 }, (_, i) => String(i + 1)) }),
    ],
    ["an unknown chain", `{ networkConfigs(chainId: 5) { name } }`, () => ({})],
    [
      "networks",
      `{ networkConfigs { chainId name confirmations contracts { name address deployBlock } indexing { indexedBlock lagBlocks isReady } } }`,
      () => ({}),
    ],
    [
      "a history-only page",
      `query($w: Address!) { playerBets(wallet: $w, first: 7) { totalCount nodes { chainId betId status network { chainId } } pageInfo { hasNextPage endCursor } } }`,
      () => ({ w: t.fixtures.whale }),
    ],
    ["an edited cursor", `query($w: Address!) { playerBets(wallet: $w, first: 2, after: "eyJ4IjoxfQ") { nodes { betId } } }`, () => ({ w: t.fixtures.whale })],
    ["an invalid literal", `{ pendingBetCount(wallet: "nope") }`, () => ({})],
    ["a wallet nobody used", `query WalletPending { pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`, () => ({})],
    ["first out of range", `query($w: Address!) { playerBets(wallet: $w, first: 0) { nodes { betId } } }`, () => ({ w: t.fixtures.whale })],
  ];
  for (const [name, query, variables] of cases) {
    it(`are the plan's answers: ${name}`, async () => {
      const vars = variables();
      const [direct, viaPlan] = await Promise.all([post(t.url, { query, variables: vars }), post(plannedHttp.url, { query, variables: vars })]);
      expect(direct).toEqual(viaPlan);
    });
  }

  it("are the plan's answers for a document of several operations owned by different subgraphs", async () => {
    const query = `query A { networkConfigs { name } } query B { betResults(chainId: 31337, betIds: ["1"]) { betId } }`;
    for (const operationName of ["A", "B"]) {
      const [direct, viaPlan] = await Promise.all([post(t.url, { query, operationName }), post(plannedHttp.url, { query, operationName })]);
      expect(JSON.parse(direct.body).errors).toBeUndefined();
      expect(direct).toEqual(viaPlan);
    }
  });

  it("are the plan's answers for a field answered under the key __proto__", async () => {
    const query = `{ betResults(chainId: 31337, betIds: ["1", "2"]) { __proto__: betId betId result { __proto__: won outcome } } }`;
    for (let i = 0; i < 3; i++) {
      const [direct, viaPlan] = await Promise.all([post(t.url, { query }), post(plannedHttp.url, { query })]);
      expect(direct).toEqual(viaPlan);
    }
  });

  it("are the plan's answers for generated selections (seeded)", async () => {
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: T[]) => items.filter(() => next() < 0.5);
    const proofFields = ["protocol", "curve", "piA", "piB", "piC", "publicSignals", "solidityCalldata", "verified"];
    const resultFields = ["outcome", "won", "payout"];
    for (let i = 0; i < 40; i++) {
      const proof = pick(proofFields);
      const result = [...pick(resultFields), ...(proof.length ? [`proof { ${proof.join(" ")} }`] : [])];
      const selection = ["betId", ...(next() < 0.3 ? ["chainId"] : []), ...(result.length ? [`result { ${result.join(" ")} }`] : [])];
      const betIds = Array.from({ length: 1 + Math.floor(next() * 20) }, () => String(1 + Math.floor(next() * 120)));
      const query = `query($ids: [UInt256!]!) { betResults(chainId: ${next() < 0.9 ? 31337 : 1337}, betIds: $ids) { ${selection.join(" ")} } }`;
      const [direct, viaPlan] = await Promise.all([
        post(t.url, { query, variables: { ids: betIds } }),
        post(plannedHttp.url, { query, variables: { ids: betIds } }),
      ]);
      expect(direct, query).toEqual(viaPlan);
    }
  });
});

/**
 * The supergraph as it was before the history subgraph shared its bets' networks and results
 * (history.graphql): the same subgraphs, but a wallet page planned as three fetches — the page,
 * then the networks' and the results' entity fetches.
 */
function threeHopSupergraph(): string {
  const history = parse(readFileSync(new URL("../subgraphs/history/history.graphql", import.meta.url), "utf8"));
  const shared = new Set(["NetworkConfig.name", "NetworkConfig.confirmations", "Bet.result"]);
  const own = visit(history, {
    ObjectTypeDefinition(node) {
      if (node.name.value === "BetResult" || node.name.value === "Groth16Proof") return null;
      return { ...node, fields: node.fields?.filter((field) => !shared.has(`${node.name.value}.${field.name.value}`)) };
    },
  });
  const composed = composeSupergraph({ history: print(own) });
  if (composed.errors) throw new Error(composed.errors.join("\n"));
  return composed.supergraphSdl;
}

describe("a wallet page in one hop", () => {
  let threeHops: Gateway;
  let threeHopsHttp: RunningHttpServer;
  let directory: string;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "three-hops-"));
    const supergraphPath = join(directory, "supergraph.graphql");
    writeFileSync(supergraphPath, threeHopSupergraph());
    threeHops = createGateway({
      db: t.db,
      logger: silentLogger(),
      ...testGatewaySettings({ production: true, subgraphUrls: t.stack.subgraphUrls, planEveryOperation: true, supergraphPath }),
    });
    threeHopsHttp = await threeHops.listen("127.0.0.1", 0);
  });
  afterAll(async () => {
    await threeHops?.stop();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it("is one call to the history subgraph, the operation as the client wrote it", async () => {
    const query = WALLET_PAGE.replace("query WalletPage", "query WalletPageOnce");
    const { body } = await post(t.url, { query, variables: { w: t.fixtures.whale }, operationName: "WalletPageOnce" });
    const nodes = JSON.parse(body).data.playerBets.nodes as { network: { name: string }; result: unknown }[];
    expect(nodes.some((node) => node.result !== null)).toBe(true);
    expect(nodes.every((node) => node.network.name.length > 0)).toBe(true);
    const calls = (await Promise.all(["history", "networks", "results"].map(subgraphOperations)))
      .flatMap((text) => text.split("\n"))
      .filter((line) => line.includes('operation="WalletPageOnce'));
    // Three hops sent WalletPageOnce__history__0, then __networks__ and __results__ entity fetches.
    expect(calls).toEqual(['graphql_requests_total{operation="WalletPageOnce",outcome="ok",service="subgraph-history"} 1']);
  });

  const walletOf = async (bet: { chainId: number; betId: string } | null) =>
    bet ? ((await t.db.prisma.bet.findUnique({ where: { chainId_betId: { chainId: BigInt(bet.chainId), betId: bet.betId } } }))?.player ?? null) : null;
  const cases: [string, string, () => Promise<Record<string, unknown>>][] = [
    ["the benchmarked wallet page", WALLET_PAGE, async () => ({ w: t.fixtures.whale })],
    [
      "every shared field, edges and nodes, fragments and aliases",
      `query($w: Address!) { playerBets(wallet: $w, first: 9) { edges { cursor node { ...B n: network { confirmations } } } nodes { ...B r: result { payout } } } }
       fragment B on Bet { betId status network { chainId name confirmations } result { outcome won payout proof { protocol curve piA piB piC publicSignals solidityCalldata verified } } }`,
      async () => ({ w: t.fixtures.whale }),
    ],
    ["the wallet of the bet with a bad proof (verified: false)", WALLET_PAGE, async () => ({ w: (await walletOf(t.fixtures.badProof)) ?? t.fixtures.whale })],
    [
      "pending bets only (no results) and @skip",
      `query($w: Address!, $s: Boolean!) { playerBets(wallet: $w, filter: { status: [PENDING] }) { nodes { betId result { won } network @skip(if: $s) { name } } } }`,
      async () => ({ w: t.fixtures.whale, s: true }),
    ],
    [
      "aliases, oldest first",
      `query($w: Address!) { a: playerBets(wallet: $w, first: 3, orderDirection: ASC) { pageInfo { endCursor } } b: playerBets(wallet: $w, first: 3, orderDirection: ASC) { nodes { betId result { won proof { verified } } } } }`,
      async () => ({ w: t.fixtures.whale }),
    ],
    [
      "minBlock indexed",
      `query($w: Address!) { playerBets(wallet: $w, first: 5, minBlock: [{ chainId: 31337, block: "1" }]) { nodes { betId network { name } result { won } } } }`,
      async () => ({ w: t.fixtures.whale }),
    ],
    [
      "minBlock not yet indexed",
      `query($w: Address!) { playerBets(wallet: $w, first: 5, minBlock: [{ chainId: 31337, block: "999999999" }]) { nodes { betId result { won } } } }`,
      async () => ({ w: t.fixtures.whale }),
    ],
    ["first out of range", `query($w: Address!) { playerBets(wallet: $w, first: 0) { nodes { result { won } } } }`, async () => ({ w: t.fixtures.whale })],
    [
      "the explorer and a bet's network through an entity fetch (read by history's loaders)",
      `query($id: UInt256!) { bets(first: 12) { nodes { betId network { name confirmations } result { won proof { verified } } } } betResult(chainId: 31337, betId: $id) { status network { name } result { payout } } }`,
      async () => ({ id: t.fixtures.sampleSettled?.betId ?? "1" }),
    ],
  ];
  for (const [name, query, variables] of cases) {
    it(`answers as three hops did: ${name}`, async () => {
      const vars = await variables();
      const [oneHop, viaThreeHops] = await Promise.all([post(t.url, { query, variables: vars }), post(threeHopsHttp.url, { query, variables: vars })]);
      expect(oneHop, query).toEqual(viaThreeHops);
    });
  }
});
