import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GAME_IDS } from "../chain/betvault.ts";
import { FIXTURE_NETWORKS } from "../fixtures/seed.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// Hostile input, generated: every argument of every query gets values of the wrong type, huge
// arrays, deep nesting, unicode, prototype keys, numbers past 2^256; bodies get broken JSON and
// binary. Each answer must be a clear contract error (never INTERNAL_SERVER_ERROR), and the
// service must answer normally afterwards. Every argument is as often a valid value of the fixture
// (its chain ids, bet ids, wallets), so that a fair share of runs gets past validation into the
// resolvers: an answer without errors must have the operation's shape, and too few of them fails.

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
  fc.constantFrom("0x", `0X${"a".repeat(40)}`, `0x${"g".repeat(40)}`, "1e3", "01", "-0", " 1", "NaN", "Infinity", "\u0000", "__proto__", "constructor"),
  fc.array(fc.string(), { maxLength: 300 }),
  fc.dictionary(fc.constantFrom("__proto__", "constructor", "prototype", "chainId", "status"), fc.jsonValue(), { maxKeys: 4 }),
  fc.jsonValue({ depthSize: "large", maxDepth: 30 }),
  fc.constant(null),
  fc.boolean(),
);

/** A variable: mostly `valid` (undefined: the variable left out), sometimes hostile. */
const argument = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: hostile }) as fc.Arbitrary<unknown>;
const CHAIN_IDS = FIXTURE_NETWORKS.map((n) => n.chainId);
const chainId = fc.constantFrom(...CHAIN_IDS);
// The fixture numbers bets from 1 on each network; the smaller one holds a few dozen of the 120.
// (UInt256 is a decimal string: a JSON number is the hostile side's.)
const betId = fc.integer({ min: 1, max: 20 }).map(String);
const wallet = () => fc.constantFrom(...t.fixtures.wallets);
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const filter = fc.record(
  { chainId, status: fc.subarray(["PENDING", "SETTLED", "REFUNDED"], { minLength: 1 }), game: fc.constantFrom(...GAME_IDS) },
  { requiredKeys: [] },
);

type Data = Record<string, unknown>;
interface Operation {
  query: string;
  /** Generators of $a…$e (built once the fixture is seeded). */
  variables: () => fc.Arbitrary<unknown>[];
  /** An answer without errors: throws unless `data` has the operation's shape for these variables. */
  expectShape: (data: Data, variables: unknown[]) => void;
  /** The answer holds fixture data (a bet found, a non-zero count, a network). */
  found: (data: Data) => boolean;
}

const asBetId = (value: unknown) => BigInt(value as string | number).toString();
const expectBetOrNull = (bet: unknown, requested: unknown) => {
  if (bet !== null) expect(bet).toEqual({ betId: asBetId(requested) });
};
const expectCount = (count: unknown) => {
  expect(Number.isSafeInteger(count) && (count as number) >= 0, `count ${JSON.stringify(count)}`).toBe(true);
};

const OPERATIONS: Operation[] = [
  {
    // ($a was `ChainId` here, which the argument's `ChainId!` refuses: not one run reached the resolver.)
    query: `query ($a: ChainId!, $b: UInt256!) { betResult(chainId: $a, betId: $b) { betId } }`,
    variables: () => [argument(chainId), argument(betId)],
    expectShape: (data, [, b]) => expectBetOrNull(data.betResult, b),
    found: (data) => data.betResult !== null,
  },
  {
    query: `query ($a: ChainId!, $b: [UInt256!]!) { betResults(chainId: $a, betIds: $b) { betId } }`,
    variables: () => [argument(chainId), argument(fc.array(betId, { minLength: 1, maxLength: 5 }))],
    expectShape: (data, [, b]) => {
      expect(Array.isArray(data.betResults)).toBe(true);
      const bets = data.betResults as unknown[];
      // GraphQL input coercion takes a single value for a list as a list of one (a hostile "10" is ["10"]).
      const ids = Array.isArray(b) ? b : [b];
      expect(bets).toHaveLength(ids.length);
      for (const [i, bet] of bets.entries()) expectBetOrNull(bet, ids[i]);
    },
    found: (data) => (data.betResults as unknown[]).some((bet) => bet !== null),
  },
  {
    query: `query ($a: Address!, $b: PlayerBetsFilter, $c: Int, $d: String, $e: OrderDirection) { playerBets(wallet: $a, filter: $b, first: $c, after: $d, orderDirection: $e) { totalCount } }`,
    variables: () => [
      argument(wallet()),
      argument(fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: filter })),
      argument(optional(fc.integer({ min: 1, max: 100 }))),
      argument(fc.constant(undefined)),
      argument(optional(fc.constantFrom("ASC", "DESC"))),
    ],
    expectShape: (data) => expectCount((data.playerBets as { totalCount?: unknown } | null)?.totalCount),
    found: (data) => (data.playerBets as { totalCount: number }).totalCount > 0,
  },
  {
    query: `query ($a: Address!, $b: ChainId) { pendingBetCount(wallet: $a, chainId: $b) }`,
    variables: () => [argument(wallet()), argument(optional(chainId))],
    expectShape: (data) => expectCount(data.pendingBetCount),
    found: (data) => (data.pendingBetCount as number) > 0,
  },
  {
    query: `query ($a: ChainId) { networkConfigs(chainId: $a) { name } }`,
    variables: () => [argument(optional(chainId))],
    expectShape: (data, [a]) => {
      expect(data.networkConfigs).toEqual(
        a === undefined || a === null ? FIXTURE_NETWORKS.map(() => ({ name: expect.any(String) })) : [{ name: expect.any(String) }],
      );
    },
    found: (data) => (data.networkConfigs as unknown[]).length > 0,
  },
];
/** Of the runs of each operation, at least this share must get past validation and answer fixture data. */
const MIN_FOUND = 0.1;

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
  it.each(OPERATIONS.map((operation) => [operation.query, operation] as const))("%s", async (_query, operation) => {
    let runs = 0;
    let found = 0;
    await fc.assert(
      fc.asyncProperty(fc.tuple(...operation.variables()), async (values) => {
        const [a, b, c, d, e] = values;
        const body = JSON.stringify({ query: operation.query, variables: { a, b, c, d, e } });
        const result = await send(body);
        expectClearError(result);
        runs++;
        if (result.json.errors) return;
        expect(result.status).toBe(200);
        // The shape follows the variables as the server read them: JSON turns Infinity and NaN into
        // null and leaves out undefined (the failing run of stop 30 took Infinity for a chain id).
        const sent = (JSON.parse(body) as { variables: Record<string, unknown> }).variables;
        operation.expectShape(result.json.data as Data, [sent.a, sent.b, sent.c, sent.d, sent.e]);
        if (operation.found(result.json.data as Data)) found++;
      }),
      { numRuns: RUNS },
    );
    expect(found, `${found} of ${runs} runs answered fixture data`).toBeGreaterThanOrEqual(runs * MIN_FOUND);
  });

  it("filters built of hostile fields", async () => {
    const query = OPERATIONS[2]!.query;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ chainId: hostile, status: hostile, game: hostile, placedFrom: hostile, placedTo: hostile }, { requiredKeys: [] }),
        async (filter) => {
          expectClearError(await send(JSON.stringify({ query, variables: { a: t.fixtures.whale, b: filter } })));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("edited cursors", () => {
  const PAGE = `query ($w: Address!, $after: String) { playerBets(wallet: $w, first: 2, after: $after) { pageInfo { endCursor } nodes { betId } } }`;
  const realCursor = async () => {
    const { json } = await send(JSON.stringify({ query: PAGE, variables: { w: t.fixtures.whale } }));
    const cursor = (json.data as { playerBets: { pageInfo: { endCursor: string } } }).playerBets.pageInfo.endCursor;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    return cursor;
  };
  const decode = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Record<string, unknown>;
  const encode = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString("base64url");
  const page = (after: string) => send(JSON.stringify({ query: PAGE, variables: { w: t.fixtures.whale, after } }));
  const expectRefusedAfter = (result: Awaited<ReturnType<typeof send>>) => {
    expect(result.json.errors?.[0]?.extensions, JSON.stringify(result.json.errors)).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "after" });
  };

  it.each([
    ["b = 20 digits", { b: "99999999999999999999" }],
    ["l = 2^40", { l: 2 ** 40 }],
    ["b = 0x10", { b: "0x10" }],
    ["b = -1", { b: "-1" }],
    ["l = -1", { l: -1 }],
    ["l = 1.5", { l: 1.5 }],
    ["c = 0", { c: "0" }],
    ["c past 2^53", { c: "99999999999999999" }],
    ["b with a leading zero", { b: "01" }],
    ["an extra key", { extra: true }],
    // In range and well formed, but not what the server issued (the cursor is signed).
    ["b = 1 (in range)", { b: "1" }],
    ["l = 0 (in range)", { l: 0 }],
    ["c = another network (in range)", { c: "1337" }],
    ["q of another cursor", { q: "AAAAAAAAAAAAAAAAAAAAAA" }],
  ])("answers BAD_USER_INPUT naming after for a real cursor with %s", async (_what, edit) => {
    expectRefusedAfter(await page(encode({ ...decode(await realCursor()), ...edit })));
  });

  it("answers every decoded-edited-re-encoded cursor with BAD_USER_INPUT naming after (or a page when the edit changed nothing)", async () => {
    const original = decode(await realCursor());
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("q", "b", "l", "c"),
        fc.oneof(
          hostile,
          fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }).map(String),
          fc.bigInt({ min: 1n << 62n, max: 1n << 66n }).map(String),
          fc.integer({ min: 2 ** 31 - 4, max: Number.MAX_SAFE_INTEGER }),
          fc.constantFrom(2 ** 40, 1.5, -1, "0x10", "-1", "00", "0"),
        ),
        async (field, value) => {
          const unchanged = JSON.stringify(value) === JSON.stringify(original[field as keyof typeof original]);
          const result = await page(encode({ ...original, [field]: value }));
          expectClearError(result);
          if (unchanged) expect(result.json.data).toHaveProperty("playerBets.nodes");
          else expectRefusedAfter(result);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("request mistakes found by earlier fuzzing", () => {
  it.each([
    ["an operationName naming no operation", { query: "query A { __typename }", operationName: "B" }],
    ["several operations and no operationName", { query: "query A { __typename } query C { __typename }" }],
    ["an APQ hash that does not match its query", { query: "{ __typename }", extensions: { persistedQuery: { version: 1, sha256Hash: "abc" } } }],
    ["an APQ of an unsupported version", { query: "{ __typename }", extensions: { persistedQuery: { version: 2, sha256Hash: "abc" } } }],
    ["an APQ extension that is not an object", { extensions: { persistedQuery: "x" } }],
    ["an APQ extension without a version", { query: "{ __typename }", extensions: { persistedQuery: { sha256Hash: "abc" } } }],
  ])("answers %s with HTTP 400 BAD_REQUEST", async (_what, body) => {
    const result = await send(JSON.stringify(body));
    expect(result.status).toBe(400);
    expect(result.json.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
  });

  it.each(["\u0000", "dice\u0000", "\u0000\u0000"])("answers filter.game %j with BAD_USER_INPUT naming filter.game", async (game) => {
    const query = `query ($w: Address!, $g: String) { playerBets(wallet: $w, filter: { game: $g }) { totalCount nodes { betId } } }`;
    const result = await send(JSON.stringify({ query, variables: { w: t.fixtures.whale, g: game } }));
    expect(result.json.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "filter.game" });
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
          fc.constantFrom(
            '{"query": 1}',
            '{"query": null}',
            '{"query": ["{ __typename }"]}',
            '{"variables": "x", "query": "{ __typename }"}',
            '{"__proto__": {"query": "{ __typename }"}}',
          ),
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
    expect(json).toEqual({
      data: { networkConfigs: [{ chainId: 1337 }, { chainId: 31337 }] },
      extensions: { cost: expect.any(Object), readAt: expect.any(Array) },
    });
  });
});
