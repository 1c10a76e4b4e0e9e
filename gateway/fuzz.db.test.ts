import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

// Hostile input, generated: every argument of every query gets values of the wrong type, huge
// arrays, deep nesting, unicode, prototype keys, numbers past 2^256; bodies get broken JSON and
// binary. Each answer must be a clear contract error (never INTERNAL_SERVER_ERROR), and the
// service must answer normally afterwards.

const KNOWN_CODES = new Set(["BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED", "GRAPHQL_PARSE_FAILED", "BAD_REQUEST", "PAYLOAD_TOO_LARGE", "QUERY_TOO_COMPLEX"]);
const RUNS = 120;

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
});
afterAll(async () => {
  await t?.close();
});

async function send(body: string, contentType = "application/json") {
  const response = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": contentType }, body });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] } };
}

const hostile = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: 0n, max: 1n << 300n }).map((n) => n.toString()),
  fc.bigInt({ min: -(1n << 260n), max: 1n << 260n }).map((n) => `${n}`),
  fc.constantFrom("0x", "0X" + "a".repeat(40), "0x" + "g".repeat(40), "1e3", "01", "-0", " 1", "NaN", "Infinity", "\u0000", "__proto__", "constructor"),
  fc.array(fc.string(), { maxLength: 300 }),
  fc.dictionary(fc.constantFrom("__proto__", "constructor", "prototype", "chainId", "status"), fc.jsonValue(), { maxKeys: 4 }),
  fc.jsonValue({ depthSize: "large", maxDepth: 30 }),
  fc.constant(null),
  fc.boolean(),
);

const OPERATIONS = [
  `query ($a: ChainId, $b: UInt256!) { betResult(chainId: $a, betId: $b) { betId } }`,
  `query ($a: ChainId!, $b: [UInt256!]!) { betResults(chainId: $a, betIds: $b) { betId } }`,
  `query ($a: Address!, $b: PlayerBetsFilter, $c: Int, $d: String, $e: OrderDirection) { playerBets(wallet: $a, filter: $b, first: $c, after: $d, orderDirection: $e) { totalCount } }`,
  `query ($a: Address!, $b: ChainId) { pendingBetCount(wallet: $a, chainId: $b) }`,
  `query ($a: ChainId) { networkConfigs(chainId: $a) { name } }`,
];

function expectClearError(result: Awaited<ReturnType<typeof send>>) {
  expect([200, 400, 413]).toContain(result.status);
  if (result.json.errors) {
    for (const error of result.json.errors) {
      expect(KNOWN_CODES.has(error.extensions?.code ?? ""), `${error.extensions?.code}: ${error.message}`).toBe(true);
      expect(error.message).not.toMatch(/prisma|postgres|\.ts:\d+|at Object\./i);
    }
  }
}

describe("fuzzed arguments", () => {
  it.each(OPERATIONS)("%s", async (query) => {
    await fc.assert(
      fc.asyncProperty(hostile, hostile, hostile, hostile, hostile, async (a, b, c, d, e) => {
        expectClearError(await send(JSON.stringify({ query, variables: { a, b, c, d, e } })));
      }),
      { numRuns: RUNS },
    );
  });

  it("filters built of hostile fields", async () => {
    const query = OPERATIONS[2]!;
    await fc.assert(
      fc.asyncProperty(fc.record({ chainId: hostile, status: hostile, game: hostile, placedFrom: hostile, placedTo: hostile }, { requiredKeys: [] }), async (filter) => {
        expectClearError(await send(JSON.stringify({ query, variables: { a: t.fixtures.whale, b: filter } })));
      }),
      { numRuns: RUNS },
    );
  });
});

describe("fuzzed bodies", () => {
  it("broken JSON, binary, wrong content types and odd shapes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 500 }),
          fc.uint8Array({ maxLength: 500 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.constantFrom('{"query": 1}', '{"query": null}', '{"query": ["{ __typename }"]}', '{"variables": "x", "query": "{ __typename }"}', '{"__proto__": {"query": "{ __typename }"}}'),
        ),
        fc.constantFrom("application/json", "text/plain", "application/octet-stream", "application/graphql-response+json"),
        async (body, contentType) => {
          expectClearError(await send(body, contentType));
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it("still answers well-formed queries after all of it", async () => {
    const { json } = await send(JSON.stringify({ query: `{ networkConfigs { chainId } }` }));
    expect(json).toEqual({ data: { networkConfigs: [{ chainId: 1337 }, { chainId: 31337 }] } });
  });
});
