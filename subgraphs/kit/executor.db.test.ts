import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_VERSION } from "../../bin/wiring.ts";
import { silentLogger } from "../../core/logger.ts";
import { NetworkDirectory } from "../../core/networks.ts";
import { readProofCache } from "../../fixtures/proof-cache.ts";
import { seedFixtures, type FixtureSummary } from "../../fixtures/seed.ts";
import { createGateway, type Gateway } from "../../gateway/server.ts";
import { createTestDatabase, type TestDatabase } from "../../test/db.ts";
import { testGatewaySettings } from "../../test/stack.ts";
import { loadSubgraphFactories } from "../registry.ts";
import type { RunnableSubgraph } from "./subgraph.ts";

// The compiled executor (kit/executor.ts) answers exactly as graphql-js does: every subgraph runs
// twice over one database, compiled and on graphql-js, and each request is sent to both. The
// requests are the gateway's own (recorded while it answers the contract's operations, errors
// included: query plans with `_entities`) and direct ones (variables, introspection, `_service`,
// bad representations). Status, Cache-Control and the body bytes must be equal.

interface Pair {
  name: string;
  compiled: RunnableSubgraph;
  reference: RunnableSubgraph;
  compiledUrl: string;
  referenceUrl: string;
}

interface Answer {
  status: number;
  cacheControl: string | null;
  body: string;
}

let db: TestDatabase;
let fixtures: FixtureSummary;
let pairs: Pair[];
let gateway: Gateway;
let gatewayUrl: string;
const recorder: { server?: Server } = {};
/** Bodies the gateway sent, by subgraph name, in order. */
const recorded: { name: string; body: string }[] = [];

async function post(url: string, body: string): Promise<Answer> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.status, cacheControl: response.headers.get("cache-control"), body: await response.text() };
}

const pairNamed = (name: string) => pairs.find((p) => p.name === name)!;

beforeAll(async () => {
  db = await createTestDatabase();
  fixtures = await seedFixtures(db, { bets: 120, proofCache: readProofCache() });
  const deps = { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false };
  pairs = [];
  for (const create of await loadSubgraphFactories()) {
    const compiled = create(deps);
    const reference = create({ ...deps, execution: "graphql-js" });
    pairs.push({
      name: compiled.name,
      compiled,
      reference,
      compiledUrl: `${(await compiled.listen("127.0.0.1", 0)).url}/graphql`,
      referenceUrl: `${(await reference.listen("127.0.0.1", 0)).url}/graphql`,
    });
  }
  // One recording front per subgraph: the gateway's requests go through it to the compiled subgraph.
  recorder.server = createServer((req, res) => {
    const name = (req.url ?? "").split("/")[1] ?? "";
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      recorded.push({ name, body });
      fetch(pairNamed(name).compiledUrl, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => {
          res.writeHead(answer.status, {
            "content-type": answer.headers.get("content-type") ?? "application/json",
            "cache-control": answer.headers.get("cache-control") ?? "",
          });
          res.end(await answer.text());
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => recorder.server!.listen(0, "127.0.0.1", resolve));
  const front = `http://127.0.0.1:${(recorder.server.address() as AddressInfo).port}`;
  gateway = createGateway({
    ...testGatewaySettings({ production: false }),
    version: SERVICE_VERSION,
    db,
    logger: silentLogger(),
    subgraphUrls: Object.fromEntries(pairs.map((p) => [p.name, `${front}/${p.name}`])),
  });
  gatewayUrl = `${(await gateway.listen("127.0.0.1", 0)).url}/graphql`;
});

afterAll(async () => {
  await gateway?.stop();
  await new Promise<void>((resolve) => (recorder.server ? recorder.server.close(() => resolve()) : resolve()));
  for (const pair of pairs ?? []) await Promise.all([pair.compiled.stop(), pair.reference.stop()]);
  await db?.close();
});

const BET_FIELDS = `chainId betId player token stake game clientSeed serverSeedHash status
  placedBlock placedTx placedAt settledBlock settledTx settledAt refundedBlock refundedTx refundedAt
  confirmations finalized network { chainId name confirmations }
  result { outcome won payout proof { protocol curve piA piB piC publicSignals solidityCalldata verified } }`;
const DEAD = "0x000000000000000000000000000000000000dead";

/** The contract's operations through the gateway, good and bad: what makes the recorded subgraph traffic. */
function gatewayOperations(): { query: string; variables?: Record<string, unknown> }[] {
  const sample = fixtures.sampleSettled!;
  const ids = Array.from({ length: 30 }, (_, i) => String(i + 1));
  return [
    {
      query: `{ networkConfigs { chainId name confirmations contracts { name address deployBlock } verificationKey { protocol curve nPublic json sha256 } indexing { indexedBlock headBlock finalizedBlock lagBlocks isReady backfillProgress updatedAt } } }`,
    },
    { query: `query ($c: ChainId) { networkConfigs(chainId: $c) { name } }`, variables: { c: 5 } },
    {
      query: `query ($c: ChainId!, $id: UInt256!) { betResult(chainId: $c, betId: $id) { ${BET_FIELDS} } }`,
      variables: { c: sample.chainId, id: sample.betId },
    },
    {
      query: `query ($c: ChainId!, $ids: [UInt256!]!) { betResults(chainId: $c, betIds: $ids) { ${BET_FIELDS} } }`,
      variables: { c: sample.chainId, ids: [...ids, "999999", "1"] },
    },
    {
      query: `query ($c: ChainId!, $ids: [UInt256!]!) { betResults(chainId: $c, betIds: $ids) { betId result { outcome won payout proof { piA piB piC publicSignals verified } } } }`,
      variables: { c: sample.chainId, ids },
    },
    { query: `{ betResults(chainId: 31337, betIds: ["1", "2"]) { betId } again: betResult(chainId: 10, betId: "1") { betId } }` },
    {
      query: `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`,
      variables: { ids: Array.from({ length: 101 }, (_, i) => String(i + 1)) },
    },
    {
      query: `{ fairnessStats { chainId game settledBets wonBets refundedBets totalStake totalPayout observedRtp expectedRtp outcomeHistogram chiSquare pValue finalizedSettledBets } }`,
    },
    { query: `{ fairnessStats(chainId: 31337, game: "dice") { game settledBets } }` },
    {
      query: `query ($w: Address!) { playerBets(wallet: $w, first: 20) { totalCount edges { cursor node { ${BET_FIELDS} } } nodes { betId token { address symbol decimals } } pageInfo { hasNextPage endCursor } } }`,
      variables: { w: fixtures.whale },
    },
    { query: `query ($w: Address!) { pendingBetCount(wallet: $w) }`, variables: { w: fixtures.whale } },
    { query: `{ playerBets(wallet: "${DEAD}", first: 101) { totalCount } }` },
    { query: `{ playerBets(wallet: "${DEAD}", after: "bm90LWEtY3Vyc29y") { totalCount } }` },
    { query: `{ playerBets(wallet: "${DEAD}", filter: { chainId: 10 }) { totalCount } }` },
    { query: `query ($w: Address!) { pendingBetCount(wallet: $w) }`, variables: { w: "not-an-address" } },
  ];
}

/** Requests sent to a subgraph directly: what the gateway never sends, or sends only on odd input. */
function directRequests(): { name: string; body: unknown }[] {
  const sample = fixtures.sampleSettled!;
  const representation = (betId: unknown, chainId: unknown = sample.chainId) => ({ __typename: "Bet", chainId, betId });
  const entities = `query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Bet { betId result { outcome won payout proof { piA verified } } } } }`;
  return [
    {
      name: "results",
      body: {
        query: entities,
        variables: { representations: [representation(sample.betId), representation("x"), representation("1", 10), representation("99999")] },
      },
    },
    { name: "results", body: { query: entities, variables: { representations: [{ __typename: "Nope", id: 1 }] } } },
    { name: "results", body: { query: entities } },
    {
      name: "results",
      body: { query: `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`, variables: { ids: ["01", 2, null] } },
    },
    { name: "results", body: { query: `query ($c: ChainId!) { betResults(chainId: $c, betIds: ["1"]) { betId } }`, variables: { c: "31337" } } },
    // A variable inside a list or object literal, null where the argument's item is non-null
    // (validation lets it through: the variable has a non-null default).
    {
      name: "results",
      body: { query: `query ($b: UInt256 = "2") { betResults(chainId: 31337, betIds: ["1", $b]) { betId } }`, variables: { b: null } },
    },
    {
      name: "history",
      body: {
        query: `query ($s: BetStatus = SETTLED) { playerBets(wallet: "${DEAD}", filter: { status: [$s] }) { totalCount } }`,
        variables: { s: null },
      },
    },
    {
      name: "history",
      body: { query: `query ($s: BetStatus = SETTLED) { playerBets(wallet: "${DEAD}", filter: { status: [$s] }) { totalCount } }`, variables: {} },
    },
    { name: "results", body: { query: `query A { betResult(chainId: 31337, betId: "1") { betId } } query B { __typename }`, operationName: "C" } },
    { name: "results", body: { query: `query A { betResult(chainId: 31337, betId: "1") { betId } } query B { __typename }`, operationName: "B" } },
    {
      name: "results",
      body: { query: `{ a: betResult(chainId: 10, betId: "1") { betId } b: betResults(chainId: 11, betIds: ["1"]) { betId } c: __typename }` },
    },
    { name: "results", body: { query: `{ __schema { queryType { name } types { name kind } } }` } },
    // A response key "__proto__": graphql-jit's object literals would set the prototype instead.
    {
      name: "results",
      body: { query: `{ betResults(chainId: 31337, betIds: ["1", "2"]) { __proto__: betId betId result { __proto__: won outcome } } }` },
    },
    {
      name: "results",
      body: { query: `fragment T on Query { __type(name: "Bet") { fields { name } } } { ...T betResult(chainId: 31337, betId: "1") { betId } }` },
    },
    { name: "results", body: { query: `{ _service { sdl } }` } },
    { name: "history", body: { query: `{ _service { sdl } }` } },
    { name: "networks", body: { query: `{ _service { sdl } }` } },
    {
      name: "networks",
      body: {
        query: `query ($r: [_Any!]!) { _entities(representations: $r) { ... on NetworkConfig { chainId name confirmations } } }`,
        variables: {
          r: [
            { __typename: "NetworkConfig", chainId: 31337 },
            { __typename: "NetworkConfig", chainId: 10 },
          ],
        },
      },
    },
    { name: "history", body: { query: `{ playerBets(wallet: "${DEAD}") { totalCount nodes { betId } } }` } },
    { name: "history", body: { query: `{ playerBets(wallet: "${DEAD}") { totalCount nodes { betId } } }`, variables: { unused: 1 } } },
  ];
}

describe("the compiled executor answers as graphql-js", () => {
  it("for every subgraph request the gateway makes for the contract's operations", async () => {
    for (const operation of gatewayOperations()) {
      const response = await fetch(gatewayUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(operation) });
      await response.text();
    }
    expect(new Set(recorded.map((r) => r.name))).toEqual(new Set(["networks", "results", "history"]));
    expect(recorded.some((r) => r.body.includes("_entities"))).toBe(true);
    // The gateway's own requests reached the compiled subgraphs once: each is compiled from here on.
    for (const { name, body: request } of recorded) {
      const pair = pairNamed(name);
      const [compiled, reference] = await Promise.all([post(pair.compiledUrl, request), post(pair.referenceUrl, request)]);
      expect({ name, request, ...compiled }).toEqual({ name, request, ...reference });
    }
    const errors = await Promise.all(recorded.map(async ({ name, body }) => (await post(pairNamed(name).compiledUrl, body)).body.includes('"errors"')));
    expect(errors.filter(Boolean).length).toBeGreaterThan(3);
  });

  it("for direct requests: variables, introspection, _service, _entities with bad representations, several errors", async () => {
    for (const { name, body } of directRequests()) {
      const pair = pairNamed(name);
      const text = JSON.stringify(body);
      await post(pair.compiledUrl, text); // first sight runs on graphql-js; the second is compiled
      const [compiled, reference] = await Promise.all([post(pair.compiledUrl, text), post(pair.referenceUrl, text)]);
      expect({ name, text, ...compiled }).toEqual({ name, text, ...reference });
    }
  });

  it("serves the fixture bet with a bad proof as verified: false, first run (graphql-js) and compiled, and through the gateway", async () => {
    const bad = fixtures.badProof!;
    expect(bad).toMatchObject({ chainId: 1337 });
    const results = pairNamed("results");
    const stats = results.compiled.executorStats!;
    // The results subgraph's own fields (status is the history subgraph's: asked through the gateway below).
    const query = `query BadProof($c: ChainId!, $id: UInt256!) { betResult(chainId: $c, betId: $id) { betId result { proof { verified } } } }`;
    const body = JSON.stringify({ query, variables: { c: bad.chainId, id: bad.betId } });
    const expected = { data: { betResult: { betId: bad.betId, result: { proof: { verified: false } } } } };
    const before = { ...stats };
    const first = await post(results.compiledUrl, body);
    expect(stats.fallbackRuns - before.fallbackRuns).toBe(1);
    const second = await post(results.compiledUrl, body);
    expect(stats.compiledRuns - before.compiledRuns).toBe(1);
    // A subgraph's answer also says the heads it read at (extensions.readAt): the data is what is compared.
    const dataOf = (text: string) => ({ data: (JSON.parse(text) as { data: unknown }).data });
    expect([dataOf(first.body), dataOf(second.body), dataOf((await post(results.referenceUrl, body)).body)]).toEqual([expected, expected, expected]);
    const viaGateway = JSON.stringify({ query: query.replace("betId result", "betId status result"), variables: { c: bad.chainId, id: bad.betId } });
    // The gateway's answer also says its cost (extensions.cost): the data is what is compared.
    expect(JSON.parse((await post(gatewayUrl, viaGateway)).body)).toMatchObject({
      data: { betResult: { betId: bad.betId, status: "SETTLED", result: { proof: { verified: false } } } },
    });
    expect(JSON.parse((await post(gatewayUrl, viaGateway)).body).errors).toBeUndefined();
  });

  it("runs an operation on graphql-js the first time, then compiled once and run compiled; introspection on graphql-js", async () => {
    const results = pairNamed("results");
    const stats = results.compiled.executorStats!;
    expect(results.reference.executorStats).toBeUndefined();
    const query = `query Once($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { won } } }`;
    const before = { ...stats };
    for (const ids of [["1"], ["2", "3"], ["4"]]) expect((await post(results.compiledUrl, JSON.stringify({ query, variables: { ids } }))).status).toBe(200);
    expect(stats.fallbackRuns - before.fallbackRuns).toBe(1);
    expect(stats.compilations - before.compilations).toBe(1);
    expect(stats.compiledRuns - before.compiledRuns).toBe(2);
    for (let i = 0; i < 2; i++) await post(results.compiledUrl, JSON.stringify({ query: `{ __schema { queryType { name } } }` }));
    expect(stats.fallbackRuns - before.fallbackRuns).toBe(3);
    expect(stats.compiledRuns - before.compiledRuns).toBe(2);
  });
});
