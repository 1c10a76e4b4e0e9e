import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { requestFrom } from "../test/loopback-request.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { FREE_PARSED_TOKENS, POINTS_PER_PARSED_TOKEN } from "./validation-work.ts";

// The attack classes of issue 21 that no feature test shows end to end. The others are shown where
// their defence lives: aliased aggregates (gateway/points-budget.db.test.ts), a request flood
// (gateway/rate-limit.db.test.ts), cache-key churn (gateway/response-replay.test.ts: declared
// variables and the normalised operation as the key, the new-entry budget), CSV floods and slow
// CSV readers (gateway/csv-export.db.test.ts, gateway/csv-slow-reader.db.test.ts), socket floods
// (realtime/admission.db.test.ts) and deep replays from stalled sockets
// (realtime/replay-limits.db.test.ts). Here: repeated ids in one betResults, under the default budget.

let t: TestStack;
beforeAll(async () => {
  const protection = gatewayProtection(loadConfig(["shared", "gateway"], {}));
  t = await startTestStack({ bets: 120 }, { protection });
});
afterAll(async () => {
  await t?.close();
});

const QUERY = `query ($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) { betId status result { outcome won payout proof { piA piB piC publicSignals } } }
}`;

interface Answer {
  data?: { betResults: ({ betId: string } | null)[] } | null;
  extensions?: { cost?: { requested: number; actual: number } };
}

/** A loopback address no other request of this file used: a client with a new budget and its own new documents' allowance. */
let lastAddress = 100;
const freshAddress = () => `127.0.0.${++lastAddress}`;

/**
 * One GraphQL request as a client POSTs it, from its own address unless told (each attack here is
 * about one request, not about what earlier ones left of a shared budget); its status and JSON body.
 * Bounded: a stuck gateway fails the test, not the run.
 */
async function post<Body>(request: { query: string; variables?: Record<string, unknown> }, from = freshAddress()): Promise<{ status: number; body: Body }> {
  const sent = requestFrom(`${t.url}`, from, "/graphql", JSON.stringify(request));
  const timer = setTimeout(() => sent.req.destroy(new Error("no answer in 20 s")), 20_000);
  try {
    const answer = await sent.answer;
    return { status: answer.status, body: JSON.parse(answer.body) as Body };
  } finally {
    clearTimeout(timer);
  }
}

function ask(betIds: string[]): Promise<{ status: number; body: Answer }> {
  const { chainId } = t.fixtures.sampleSettled!;
  return post<Answer>({ query: QUERY, variables: { chainId, betIds } });
}

describe("repeated ids in one betResults", () => {
  it("are answered at every position, and cost what the distinct ids cost", async () => {
    const { betId } = t.fixtures.sampleSettled!;
    const once = await ask([betId]);
    const repeated = await ask(Array.from({ length: 100 }, () => betId));
    expect([once.status, repeated.status]).toEqual([200, 200]);
    expect(repeated.body.data?.betResults).toHaveLength(100);
    expect(new Set(repeated.body.data?.betResults.map((bet) => bet?.betId))).toEqual(new Set([betId]));
    expect(once.body.extensions?.cost?.actual).toBeGreaterThan(0);
    expect(repeated.body.extensions?.cost).toEqual(once.body.extensions?.cost);
  });
});

describe("a list literal nested where the schema has none", () => {
  // `betIds: [[["1"]]]` is not a [UInt256!]: the gateway's scalars accept any literal (the subgraphs
  // parse their own), and Apollo's query planner walked such a literal in time doubling with each
  // level (22 levels ~0.9 s; 30: no answer, the process stuck), at 10 points a request.
  it("is refused as a validation error at the door, whatever its depth", async () => {
    const { chainId } = t.fixtures.sampleSettled!;
    for (const depth of [24, 2, 200]) {
      const literal = `${"[".repeat(depth)}"1"${"]".repeat(depth)}`;
      const { status, body } = await post<{ data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }>({
        query: `{ betResults(chainId: ${chainId}, betIds: ${literal}) { betId } }`,
      });
      expect(status, `depth ${depth}`).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]?.extensions?.code, `depth ${depth}`).toBe("GRAPHQL_VALIDATION_FAILED");
      expect(body.errors?.[0]?.message).toBe("Expected a value of type UInt256, found a list");
    }
  }, 60_000);

  it("leaves literals of the right shape alone", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    const { status, body } = await post<Answer>({ query: `{ betResults(chainId: ${chainId}, betIds: ["${betId}", "${betId}"]) { betId } }` });
    expect(status).toBe(200);
    expect(body.data?.betResults.map((bet) => bet?.betId)).toEqual([betId, betId]);
  });
});

type Refusal = { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };

describe("documents larger than any the contract needs", () => {
  // graphql-js validates a document in time that grows faster than its size (fields of one name are
  // compared pairwise) and recurses through nested fragments: 2 300 repeated fields (62 KB, under the
  // body limit) took ~0.2–0.9 s of gateway CPU before graphql-js gave up ("Validation aborted."),
  // and 1 500 nested inline fragments overflowed the stack (HTTP 500), each for 10 points. The
  // largest documented request is ~340 tokens; a document is refused at parse past 2 000.
  const cases: Record<string, string> = {
    "2 300 repeated fields": `{ ${Array.from({ length: 2300 }, () => "networkConfigs { chainId }").join(" ")} }`,
    "4 000 __typename": `{ ${Array.from({ length: 4000 }, () => "__typename").join(" ")} }`,
    "1 500 nested inline fragments": `{ ${"... on Query { ".repeat(1500)} __typename ${"} ".repeat(1500)} }`,
  };
  it.each(Object.entries(cases))("%s: refused at parse, naming the bound, and paying for the tokens parsed", async (_name, query) => {
    const { status, body } = await post<Refusal & { extensions?: { cost?: { requested: number; actual: number } } }>({ query });
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(body.errors?.[0]?.message).toBe("The document holds more than 2000 tokens, the limit: send a smaller document");
    // Parsed up to the bound (~1.3 ms, twice with the response cache on) whatever it is sent again: not the door's 10 points.
    expect(body.extensions?.cost).toEqual({ requested: 10 + 2000 * POINTS_PER_PARSED_TOKEN, actual: 10 + 2000 * POINTS_PER_PARSED_TOKEN });
  });

  it("a syntax error at the end of a long text pays for the tokens parsed up to it past 400, as an oversized one pays for its 2 000", async () => {
    // 1 921 tokens, then the text ends before its closing brace: parsed to the end each time it is sent.
    const query = `{ ${Array.from({ length: 640 }, (_, i) => `a${i}: __typename`).join(" ")} `;
    const { status, body } = await post<Refusal & { extensions?: { cost?: { requested: number; actual: number } } }>({ query });
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    const price = 10 + (1921 - FREE_PARSED_TOKENS) * POINTS_PER_PARSED_TOKEN;
    expect(body.extensions?.cost).toEqual({ requested: price, actual: price });
    // A typo in a request as large as the largest documented one costs the door's price alone.
    const typo = await post<Refusal & { extensions?: { cost?: { requested: number; actual: number } } }>({
      query: `{ ${Array.from({ length: 130 }, (_, i) => `a${i}: __typename`).join(" ")} ! }`,
    });
    expect(typo.body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(typo.body.extensions?.cost).toEqual({ requested: 10, actual: 10 });
  });

  it("within the bound, deep nesting is a limit, not a server error, and overlap is refused in plain words", async () => {
    const nested = await post<Refusal>({ query: `{ ${"... on Query { ".repeat(390)} __typename ${"} ".repeat(390)} }` });
    expect(nested.status).toBe(400);
    expect(nested.body.errors?.[0]?.extensions?.code).toBe("QUERY_TOO_COMPLEX");
    // From a client of its own: the document's validation is priced past this client's budget (below).
    const overlapping = await requestFrom(
      t.url,
      "127.0.0.43",
      "/graphql",
      JSON.stringify({ query: `{ ${Array.from({ length: 1900 }, () => "__typename").join(" ")} }` }),
    ).answer;
    expect(overlapping.status).toBe(400);
    const refusal = JSON.parse(overlapping.body) as Refusal;
    expect(refusal.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(refusal.errors?.[0]?.message).toMatch(/^Validation aborted: the document selects too many fields of one name/);
  });
});

describe("a document that is costly to validate", () => {
  // Within the token bound, 490 copies of one field still kept the gateway ~0.1 s validating before
  // graphql-js gave up, for the 10 points any request pays: a loop from one address slowed everyone.
  // The pairs of same-named fields graphql-js compares are priced (gateway/validation-work.ts).
  it("pays for the pairs it makes graphql-js compare, and its client waits before the next", async () => {
    const copies = 490;
    const query = `{ ${Array.from({ length: copies }, () => "networkConfigs { chainId }").join(" ")} }`;
    // Pairs of networkConfigs, then of chainId below them (merged): graphql-js compares both; past
    // 5 000 free ones, half a point each. graphql-js then gives up: a refused document also pays 5 points a token.
    const pairs = 2 * ((copies * (copies - 1)) / 2);
    const tokens = 4 * copies + 2;
    const first = await requestFrom(t.url, "127.0.0.41", "/graphql", JSON.stringify({ query })).answer;
    expect(first.status).toBe(400);
    const body = JSON.parse(first.body) as Refusal & { extensions?: { cost?: { actual: number } } };
    expect(body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(body.extensions?.cost?.actual).toBe(10 + Math.ceil((pairs - 5000) / 2) + 5 * tokens);
    const next = await requestFrom(t.url, "127.0.0.41", "/graphql", JSON.stringify({ query: "{ __typename }" })).answer;
    // Its budget (5 000 points to start) is in the deepest debt a budget takes (-10 000): ~10 s to pay back.
    expect(next.status).toBe(429);
    expect(Number(next.headers["retry-after"])).toBeGreaterThanOrEqual(9);
    // Another client is not affected.
    const other = await requestFrom(t.url, "127.0.0.42", "/graphql", JSON.stringify({ query: "{ __typename }" })).answer;
    expect(other.status).toBe(200);
  });

  it("is free when fields repeat as honest fragments make them", async () => {
    const query = `{ ...A ...B } fragment A on Query { networkConfigs { chainId name } } fragment B on Query { networkConfigs { chainId confirmations } }`;
    // The first request validates the document; the second finds it validated (Apollo Server's document store).
    const validated = await post<{ extensions?: { cost?: { actual: number } } }>({ query });
    const remembered = await post<{ extensions?: { cost?: { actual: number } } }>({ query });
    expect([validated.status, remembered.status]).toEqual([200, 200]);
    expect(validated.body.extensions?.cost).toEqual(remembered.body.extensions?.cost);
  });
});

describe("work graphql-js and the planner do that no field pays for", () => {
  it("a document validation refuses pays for each of its tokens", async () => {
    const answer = await requestFrom(t.url, "127.0.0.45", "/graphql", JSON.stringify({ query: "{ nope }" })).answer;
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.body) as { extensions?: { cost?: { actual: number } } }).extensions?.cost?.actual).toBe(10 + 3 * 5);
  });

  // 195 nested `... @include(if: true) {` (1 951 tokens, valid: no field repeats, depth 0) kept
  // Apollo's query planner ~50-90 ms for 10 points; a client at 17 a second raised another's median
  // latency from ~6 ms to ~400 ms (an independent review). Fragments count towards a nesting limit.
  it("fragments nested in fragments are refused past the nesting limit, before anything plans them", async () => {
    const nested = (levels: number) => `# ${levels}\n{ ${"... @include(if: true) { ".repeat(levels)} __typename ${"} ".repeat(levels)} }`;
    const deep = await post<Refusal & { errors?: { extensions?: { limit?: string; max?: number; value?: number } }[] }>({ query: nested(195) });
    expect(deep.status).toBe(400);
    expect(deep.body.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", limit: "nesting", max: 24, value: 25 });
    const allowed = await post<{ data?: unknown }>({ query: nested(23) });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toEqual({ __typename: "Query" });
  });
});

describe("operations this API does not have", () => {
  // The schema has queries only. graphql-js 16 does not check that an operation's root type exists,
  // so a mutation or subscription reached Apollo's query planner and failed there as HTTP 500.
  it.each(["mutation", "subscription"])("a %s is a validation error, not a server error", async (kind) => {
    const { status, body } = await post<Refusal>({ query: `${kind} { __typename }` });
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(body.errors?.[0]?.message).toBe(`This API has no ${kind} operations: it answers queries only`);
  });
});
