import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// Every error code reachable in the read API, through the gateway: a clear code, the argument
// named where the resolver knows it, nothing internal in the message, and the service unharmed.

let t: TestStack;
const logLines: Record<string, unknown>[] = [];
beforeAll(async () => {
  const logger = createLogger({ level: "info", destination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) } });
  t = await startTestStack({ bets: 120 }, { production: true, logger });
});
afterAll(async () => {
  await t?.close();
});

const codeOf = (r: { errors?: { extensions?: Record<string, unknown> }[] }) => r.errors?.[0]?.extensions?.code;

describe("BAD_USER_INPUT", () => {
  it.each([
    ["malformed address literal", `{ pendingBetCount(wallet: "0x1234") }`],
    ["bad checksum literal", `{ pendingBetCount(wallet: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD") }`],
    ["leading zero UInt256", `{ betResult(chainId: 31337, betId: "01") { betId } }`],
    ["negative UInt256", `{ betResult(chainId: 31337, betId: "-1") { betId } }`],
    ["exponent UInt256", `{ betResult(chainId: 31337, betId: "1e3") { betId } }`],
    ["UInt256 beyond 2^256-1", `{ betResult(chainId: 31337, betId: "${(1n << 256n).toString()}") { betId } }`],
    ["UInt256 as a number", `{ betResult(chainId: 31337, betId: 12) { betId } }`],
    ["chainId zero", `{ networkConfigs(chainId: 0) { name } }`],
    ["chainId as a string", `{ networkConfigs(chainId: "1") { name } }`],
    ["unknown chainId", `{ betResult(chainId: 10, betId: "1") { betId } }`],
    ["first 0", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", first: 0) { totalCount } }`],
    ["first 101", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", first: 101) { totalCount } }`],
    ["foreign cursor", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", after: "bm90LWEtY3Vyc29y") { totalCount } }`],
    ["unknown filter chainId", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", filter: { chainId: 10 }) { totalCount } }`],
    ["empty status filter", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", filter: { status: [] }) { totalCount } }`],
    ["placedFrom not decimal", `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", filter: { placedFrom: "yesterday" }) { totalCount } }`],
  ])("%s", async (_name, query) => {
    const response = await t.gql(query);
    expect(codeOf(response)).toBe("BAD_USER_INPUT");
    expect(response.errors![0]!.message).not.toMatch(/prisma|postgres|select |at .*\.ts/i);
  });

  it.each([
    ["address", `query ($w: Address!) { pendingBetCount(wallet: $w) }`, { w: "not-an-address" }],
    ["bytes-like address of the wrong length", `query ($w: Address!) { pendingBetCount(wallet: $w) }`, { w: `0x${"a".repeat(64)}` }],
    ["UInt256 with spaces", `query ($id: UInt256!) { betResult(chainId: 31337, betId: $id) { betId } }`, { id: " 1" }],
    ["chainId beyond 2^53-1", `query ($c: ChainId!) { betResult(chainId: $c, betId: "1") { betId } }`, { c: 2 ** 53 }],
    ["betIds holding a number", `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`, { ids: ["1", 2] }],
    // Validation lets these through (the variable has a default); graphql-js refuses the argument
    // when it coerces it, with an error of no code.
    ["null inside a list literal", `query ($b: UInt256 = "2") { betResults(chainId: 31337, betIds: ["1", $b]) { betId } }`, { b: null }],
    [
      "null inside an input object literal",
      `query ($s: BetStatus = SETTLED) { playerBets(wallet: "0x000000000000000000000000000000000000dead", filter: { status: [$s] }) { totalCount } }`,
      { s: null },
    ],
  ])("variable: %s", async (_name, query, variables) => {
    for (let arrival = 0; arrival < 3; arrival++) {
      const response = await t.gql(query, variables);
      expect(codeOf(response)).toBe("BAD_USER_INPUT");
      expect(response.errors![0]!.message).not.toBe("Internal server error");
    }
  });

  it("names the argument a resolver rejects", async () => {
    const response = await t.gql(`{ playerBets(wallet: "0x000000000000000000000000000000000000dead", first: 500) { totalCount } }`);
    expect(response.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "first" });
  });

  it("rejects a cursor reused with another filter", async () => {
    const wallet = t.fixtures.whale;
    const first = await t.gql<{ playerBets: { pageInfo: { endCursor: string } } }>(`{ playerBets(wallet: "${wallet}", first: 2) { pageInfo { endCursor } } }`);
    const cursor = first.data!.playerBets.pageInfo.endCursor;
    for (const variant of [`filter: { chainId: 31337 }`, `orderDirection: ASC`, `filter: { game: "dice" }`]) {
      const reused = await t.gql(`{ playerBets(wallet: "${wallet}", first: 2, after: "${cursor}", ${variant}) { totalCount } }`);
      expect(reused.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "after" });
    }
    const other = await t.gql(`{ playerBets(wallet: "${t.fixtures.wallets[1]}", first: 2, after: "${cursor}") { totalCount } }`);
    expect(codeOf(other)).toBe("BAD_USER_INPUT");
  });
});

describe("Apollo's own codes and HTTP errors", () => {
  it("GRAPHQL_PARSE_FAILED", async () => {
    expect(codeOf(await t.gql(`{ networkConfigs { name `))).toBe("GRAPHQL_PARSE_FAILED");
  });
  it("GRAPHQL_VALIDATION_FAILED", async () => {
    expect(codeOf(await t.gql(`{ networkConfigs { serverSeed } }`))).toBe("GRAPHQL_VALIDATION_FAILED");
  });
  it("413 for a body over 64 KiB, 400 for malformed JSON, and the service still answers", async () => {
    const big = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ __typename }`, pad: "x".repeat(70_000) }),
    });
    expect(big.status).toBe(413);
    const malformed = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"query": ` });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe("BAD_REQUEST");
    const batched = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ query: "{ __typename }" }, { query: "{ __typename }" }]),
    });
    expect(batched.status).toBe(400);
    expect((await t.gql(`{ networkConfigs { name } }`)).data).toBeTruthy();
  });
  it("answers CORS preflights for any origin, sends no credentials header, and sets safety headers", async () => {
    const preflight = await fetch(`${t.url}/graphql`, {
      method: "OPTIONS",
      headers: { origin: "https://explorer.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const response = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://explorer.example" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-powered-by")).toBeNull();
    await response.arrayBuffer();
  });

  it("PERSISTED_QUERY_NOT_FOUND, then the registered hash alone serves the query, over GET too", async () => {
    const { createHash } = await import("node:crypto");
    const query = "{ networkConfigs { chainId name } }";
    const persistedQuery = { version: 1, sha256Hash: createHash("sha256").update(query).digest("hex") };
    const ask = (body: object) => fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const unknown = (await (await ask({ extensions: { persistedQuery } })).json()) as { errors: { extensions: { code: string } }[] };
    expect(unknown.errors[0]!.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect(((await (await ask({ query, extensions: { persistedQuery } })).json()) as { data: unknown }).data).toBeTruthy();
    const byHash = (await (await ask({ extensions: { persistedQuery } })).json()) as { data: { networkConfigs: unknown[] } };
    expect(byHash.data.networkConfigs).toHaveLength(2);
    const viaGet = await fetch(`${t.url}/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery }))}`);
    expect(((await viaGet.json()) as { data: { networkConfigs: unknown[] } }).data.networkConfigs).toHaveLength(2);
  });

  it("serves queries over GET for CDN caching", async () => {
    const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent("{ networkConfigs { chainId } }")}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { networkConfigs: [{ chainId: 1337 }, { chainId: 31337 }] },
      extensions: { cost: expect.any(Object), readAt: expect.any(Array) },
    });
  });
});

describe("QUERY_TOO_COMPLEX", () => {
  it("refuses too many aliases and too much cost before any subgraph runs, naming the limit and the value", async () => {
    const aliases = Array.from({ length: 31 }, (_, i) => `n${i}: networkConfigs { name }`).join(" ");
    const tooManyAliases = await t.gql(`{ ${aliases} }`);
    expect(tooManyAliases.status).toBe(400);
    expect(tooManyAliases.errors![0]!.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", limit: "aliases", max: 30, value: 31 });

    const page = `playerBets(wallet: "${t.fixtures.whale}", first: 100) { edges { cursor node { betId stake player status placedBlock result { outcome proof { piA piB piC } } } } }`;
    const pages = Array.from({ length: 10 }, (_, i) => `p${i}: ${page}`).join(" ");
    const tooCostly = await t.gql(`{ ${pages} }`);
    expect(tooCostly.status).toBe(400);
    expect(tooCostly.errors![0]!.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", limit: "cost", max: 5000 });
    expect(tooCostly.errors![0]!.extensions!.value).toBeGreaterThan(5000);
    expect(tooCostly.data).toBeUndefined();
  });
});

describe("INTERNAL_SERVER_ERROR", () => {
  it("masks an unexpected failure in production: no message detail, no stack trace", async () => {
    // A stored proof that lost its fields: resolving piA fails in a way no client input explains.
    const victim = await t.db.prisma.betResult.findFirstOrThrow({ where: { chainId: 31337n } });
    await t.db.prisma.betResult.update({ where: { chainId_betId: { chainId: victim.chainId, betId: victim.betId } }, data: { proof: {} } });
    const requestId = "req-test-42";
    const raw = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ query: `{ betResult(chainId: 31337, betId: "${victim.betId.toFixed(0)}") { betId result { proof { piA } } } }` }),
    });
    expect(raw.headers.get("x-request-id")).toBe(requestId);
    const response = (await raw.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(response.errors[0]).toMatchObject({ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR" } });
    expect(JSON.stringify(response)).not.toMatch(/stacktrace|Cannot return null|\.ts:\d+/i);
    // The server keeps the detail, under the client's request id, in the subgraph and the gateway.
    const logged = logLines.filter((line) => line.requestId === requestId && line.msg === "unexpected error");
    expect(logged.map((line) => line.subgraph ?? line.service).sort()).toEqual(["gateway", "results"]);
  });
});

// Last: it stops the history subgraph of this file's stack.
describe("SERVICE_UNAVAILABLE", () => {
  it("names the subgraph that is down, leaks nothing, keeps partial data, and health names it", async () => {
    await t.stack.subgraphs.history!.stop();
    // betResult is nullable: the bet's history fields fail, the networks and results parts stand.
    const response = await t.gql<{ networkConfigs: { name: string }[]; betResult: unknown }>(
      `{ networkConfigs { name } betResult(chainId: 31337, betId: "1") { betId player } }`,
    );
    expect(response.data?.networkConfigs).toHaveLength(2);
    expect(response.data?.betResult).toBeNull();
    const error = response.errors![0]!;
    expect(error.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", serviceName: "history" });
    expect(JSON.stringify(response.errors)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack/);
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
    const report = (await health.json()) as { status: string; checks: { name: string; status: string }[] };
    expect(report.status).toBe("DEGRADED");
    expect(report.checks.find((c) => c.name === "subgraph:history")?.status).toBe("DOWN");
  });
});
