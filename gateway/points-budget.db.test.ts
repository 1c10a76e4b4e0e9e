import { readFileSync } from "node:fs";
import { parse } from "graphql";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { largestDocumentedRequests } from "../test/largest-request.ts";
import { eventually } from "../test/eventually.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { CACHE_HIT_POINTS, REQUEST_POINTS, ROUTE_POINTS } from "./points-budget.ts";
import { createMemoryResponseCacheStore } from "./response-cache.ts";
import { createNewEntryBudget } from "./cache-entry-budget.ts";
import { NEW_DOCUMENT_BASE_TOKENS, newDocumentPoints, POINTS_PER_REFUSED_TOKEN, tokensOf } from "./validation-work.ts";

// The points budget end to end under the default settings: each client (here: its own loopback
// address, 127.0.0.x) pays for what its requests cost, so one address cannot repeat the most
// expensive requests the limits accept, while another address is still served.
// The buckets run on a frozen clock: nothing refills while a test runs, so the counts are exact.

let t: TestStack;
/** Every SQL statement the subgraphs ran. */
const statements: string[] = [];
/** Statements that read bets (the indexer's and the cache's own polls read other tables). */
const betReads = () => statements.filter((sql) => sql.includes('"Bet"')).length;
const config = loadConfig(["shared", "gateway"], {});
// Every client here is an address the budget has not seen: it starts with RATE_LIMIT_POINTS_INITIAL, not a full budget.
const START = config.RATE_LIMIT_POINTS_INITIAL;
beforeAll(async () => {
  const protection = gatewayProtection(config);
  t = await startTestStack(
    { bets: 120 },
    {
      protection: {
        ...protection,
        rateLimit: protection.rateLimit && {
          ...protection.rateLimit,
          now: () => 1_000_000,
          // The default free tokens of new documents, in one minute that never ends.
          newDocuments: createNewEntryBudget({ perMinute: config.RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE, now: () => 1_000_000 }),
        },
      },
      responseCache: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 64 * 1024 * 1024 }),
      onQuery: (sql) => statements.push(sql),
    },
  );
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[]; extensions?: Record<string, unknown> };
}

/** A loopback address no other test of this file uses: a client with a full budget. */
let nextAddress = 100;
const freshAddress = () => `127.0.0.${nextAddress++}`;
const remaining = (answer: Answer) => Number(answer.headers["ratelimit-remaining"]);
const costOf = (answer: Answer) => answer.body.extensions?.cost as { requested: number; actual: number } | undefined;

/** POSTs a query from one loopback address (the client the gateway charges). */
function postFrom(
  localAddress: string,
  query: string,
  variables?: Record<string, unknown>,
  extensions?: Record<string, unknown>,
  operationName?: string,
): Promise<Answer> {
  const url = new URL(`${t.url}/graphql`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Answer["body"] }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ query, variables, extensions, operationName }));
  });
}

describe("aliased aggregates are paid for by what they cost", () => {
  const attacks = {
    "bets with two aliased totalCounts under a game filter": () => `{ bets(first: 1, filter: { game: "dice" }) { a: totalCount b: totalCount } }`,
    "nine aliased playerBets { totalCount } under a game filter": () =>
      `{ ${Array.from({ length: 9 }, (_, i) => `p${i}: playerBets(wallet: "${t.fixtures.whale}", filter: { game: "dice" }) { totalCount }`).join(" ")} }`,
  };
  let address = 10;
  it.each(Object.keys(attacks) as (keyof typeof attacks)[])("%s: one address is refused within a few, another is still served", async (name) => {
    const attacker = `127.0.0.${address++}`;
    const bystander = `127.0.0.${address++}`;
    const query = attacks[name]();
    const served: number[] = [];
    let refused: Answer | undefined;
    let readsOfRefused = -1;
    const readsBefore = betReads();
    for (let i = 0; i < 8 && !refused; i++) {
      const before = betReads();
      const answer = await postFrom(attacker, query);
      if (answer.status === 200) served.push(i);
      else {
        refused = answer;
        readsOfRefused = betReads() - before;
      }
    }
    // Accepted by the query limits (under 5 000 each), so the first one is served ...
    expect(served.length).toBeGreaterThanOrEqual(1);
    // ... but not for long: a new address's 5 000 points (RATE_LIMIT_POINTS_INITIAL) pay for one, or two with the refill.
    expect(served.length).toBeLessThanOrEqual(2);
    expect(refused?.status).toBe(429);
    expect(refused?.body.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused?.body.errors?.[0]?.extensions.retryAfterSeconds).toBe(Number(refused?.headers["retry-after"]));
    // Refused before it ran: not one bet read for it (the ones served did read bets).
    expect(betReads() - readsBefore).toBeGreaterThan(0);
    expect(readsOfRefused).toBe(0);

    const other = await postFrom(bystander, query);
    expect(other.status).toBe(200);
    expect(other.body.errors).toBeUndefined();
  });
});

describe("every answer says its cost and the budget", () => {
  it("settles a page with its actual cost: a first: 100 page that holds a few bets is refunded the rest", async () => {
    const client = freshAddress();
    // A wallet with fewer than 100 bets (the fixtures spread 70 % of 120 bets over the other wallets).
    const wallet = t.fixtures.wallets.find((w) => w !== t.fixtures.whale)!;
    const query = `query ($wallet: Address!) { playerBets(wallet: $wallet, first: 100) { nodes { betId stake status } } }`;
    const page = await postFrom(client, query, { wallet });
    expect(page.status).toBe(200);
    const rows = (page.body.data as { playerBets: { nodes: unknown[] } }).playerBets.nodes.length;
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(100);
    const cost = costOf(page)!;
    // Priced for 100 bets before it ran, charged for the bets it returned.
    expect(cost.requested).toBeGreaterThan(cost.actual);
    const again = await postFrom(client, query, { wallet });
    expect(costOf(again)).toEqual(cost);
    expect(cost.requested - cost.actual).toBeGreaterThanOrEqual((100 - rows) * 3); // a Bet is 3 points an object
    expect(page.headers["ratelimit-limit"]).toBe(String(config.RATE_LIMIT_POINTS));
    expect(remaining(page)).toBe(START - cost.actual);
    expect(remaining(again)).toBe(START - 2 * cost.actual);
  });

  it("charges a request without an operation (a parse error) the least price, and says so; a refused one its tokens too", async () => {
    const client = freshAddress();
    const garbage = await postFrom(client, "{ playerBets(");
    expect(garbage.status).toBe(400);
    expect(costOf(garbage)).toEqual({ requested: REQUEST_POINTS, actual: REQUEST_POINTS });
    expect(remaining(garbage)).toBe(START - REQUEST_POINTS);
    // One that parses and validation refuses also pays for its tokens (gateway/validation-work.ts).
    const again = await postFrom(client, "{ nope }");
    expect(again.status).toBe(400);
    expect(remaining(again)).toBe(START - 2 * REQUEST_POINTS - 3 * POINTS_PER_REFUSED_TOKEN);
  });

  it("answers a cache hit with RateLimit-* headers for its fixed price, without the computing request's cost", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    const query = `{ betResult(chainId: ${chainId}, betId: "${betId}") { betId status stake result { won payout } } }`;
    const miss = await postFrom(freshAddress(), query);
    expect([miss.status, miss.headers["x-cache"]]).toEqual([200, "MISS"]);
    expect(costOf(miss)?.actual).toBeGreaterThan(CACHE_HIT_POINTS);
    const client = freshAddress();
    const hits = [await postFrom(client, query), await postFrom(client, query)];
    expect(hits.map((hit) => hit.headers["x-cache"])).toEqual(["HIT", "HIT"]);
    expect(hits.map(remaining)).toEqual([START - CACHE_HIT_POINTS, START - 2 * CACHE_HIT_POINTS]);
    for (const hit of hits) {
      expect(hit.headers["ratelimit-limit"]).toBe(String(config.RATE_LIMIT_POINTS));
      expect(hit.body.data).toEqual(miss.body.data);
      expect(hit.body.extensions?.cost).toBeUndefined();
    }
  });
});

describe("documents the gateway has not seen before", () => {
  // Each new text is parsed, validated, measured and planned (a repeated one comes from Apollo
  // Server's document store and the plan cache): ~2-4 ms that the 10 points at the door did not pay.
  let counter = 0;
  const fresh = (query: string) => `# ${++counter}\n${query}`;
  const TYPENAME_TOKENS = 3; // {, __typename, }

  it("are free up to the client's tokens of the minute, then priced by their tokens; a repeated text is not", async () => {
    const client = freshAddress();
    const free = Math.floor(config.RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE / (NEW_DOCUMENT_BASE_TOKENS + TYPENAME_TOKENS));
    expect(free).toBeGreaterThanOrEqual(10);
    for (let i = 0; i < free; i++) {
      const answer = await postFrom(client, fresh("{ __typename }"));
      expect([answer.status, costOf(answer)], `new text ${i + 1}`).toEqual([200, { requested: REQUEST_POINTS, actual: REQUEST_POINTS }]);
    }
    const priced = fresh("{ __typename }");
    const past = await postFrom(client, priced);
    expect(past.status).toBe(200);
    const price = REQUEST_POINTS + newDocumentPoints(TYPENAME_TOKENS);
    expect(price).toBeGreaterThan(10 * REQUEST_POINTS);
    expect(costOf(past)).toEqual({ requested: price, actual: price });
    expect(remaining(past)).toBe(START - free * REQUEST_POINTS - price);
    // The same text again comes from the document store: the door's price only.
    const again = await postFrom(client, priced);
    expect(costOf(again)).toEqual({ requested: REQUEST_POINTS, actual: REQUEST_POINTS });
    // Another client's free tokens are its own.
    const other = await postFrom(freshAddress(), fresh("{ __typename }"));
    expect(costOf(other)).toEqual({ requested: REQUEST_POINTS, actual: REQUEST_POINTS });
  });

  it("price every operation of a document, though one runs", async () => {
    const client = freshAddress();
    // 300 operations, 1 500 tokens: free once, priced the second time in the minute.
    const operations = () => fresh(Array.from({ length: 300 }, (_, i) => `query Q${i} { __typename }`).join(" "));
    const first = await postFrom(client, operations(), undefined, undefined, "Q7");
    expect([first.status, costOf(first)]).toEqual([200, { requested: REQUEST_POINTS, actual: REQUEST_POINTS }]);
    const second = await postFrom(client, operations(), undefined, undefined, "Q7");
    // Served or refused, depending on the budget left: either way it costs every token.
    const requested = second.status === 429 ? second.body.errors?.[0]?.extensions.cost : costOf(second)?.requested;
    expect(requested).toBe(REQUEST_POINTS + newDocumentPoints(1500));
  });

  it("a refused request's RateLimit-Remaining counts the new document's price it still pays", async () => {
    const client = freshAddress();
    const operations = () => fresh(Array.from({ length: 300 }, (_, i) => `query Q${i} { __typename }`).join(" "));
    await postFrom(client, operations(), undefined, undefined, "Q7"); // free: the minute's tokens
    const refused = await postFrom(client, operations(), undefined, undefined, "Q7");
    expect(refused.status).toBe(429);
    // It paid the door and its new document's 30 400 points (past any budget): nothing is left.
    expect(START - 2 * REQUEST_POINTS - newDocumentPoints(1500)).toBeLessThan(0);
    expect(remaining(refused)).toBe(0);
  });
});

describe("cache hits of texts the gateway parses anew", () => {
  // A hit is replayed before Apollo Server, but its key is found by parsing and printing the text
  // again (gateway/cache-key.ts) unless the gateway remembers it: ~2.7 ms for 2 000 tokens. Comment
  // variants of one stored answer's query, each text new, are priced as the new documents they are.
  it("take from the client's new-document tokens, then pay their price, then are refused; a remembered text stays at the door's price", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    const query = `{ betResult(chainId: ${chainId}, betId: "${betId}") { betId status placedBlock } }`;
    const tokens = tokensOf(parse(query));
    const stored = await postFrom(freshAddress(), query);
    expect([stored.status, stored.headers["x-cache"]]).toEqual([200, "MISS"]);
    await eventually(async () => (await postFrom(freshAddress(), query)).headers["x-cache"] === "HIT", 5_000, "the stored answer");

    const attacker = freshAddress();
    const free = Math.floor(config.RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE / (NEW_DOCUMENT_BASE_TOKENS + tokens));
    let variant = 0;
    const variantOf = () => `# variant ${++variant}\n${query}`;
    for (let i = 1; i <= free; i++) {
      const hit = await postFrom(attacker, variantOf());
      expect([hit.status, hit.headers["x-cache"], remaining(hit)], `variant ${i}`).toEqual([200, "HIT", START - i * CACHE_HIT_POINTS]);
    }
    // Past the free tokens each variant costs what a new document costs on the way through Apollo Server.
    const price = newDocumentPoints(tokens);
    let left = START - free * CACHE_HIT_POINTS;
    let refused: Answer | undefined;
    let priced = 0;
    while (!refused && priced < 50) {
      const answer = await postFrom(attacker, variantOf());
      if (answer.status !== 200) {
        refused = answer;
        break;
      }
      left -= CACHE_HIT_POINTS + price;
      priced++;
      expect([answer.headers["x-cache"], remaining(answer)], `priced variant ${priced}`).toEqual(["HIT", left]);
      expect(answer.body.data).toEqual(stored.body.data);
    }
    expect(priced).toBe(Math.floor((START - free * CACHE_HIT_POINTS) / (CACHE_HIT_POINTS + price)));
    expect(refused?.status).toBe(429);
    expect(refused?.body.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", cost: CACHE_HIT_POINTS + price });
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused?.body.errors?.[0]?.extensions.retryAfterSeconds).toBe(Number(refused?.headers["retry-after"]));
    // The refused variant was parsed too: it paid its price, and the budget is in debt.
    expect(remaining(refused!)).toBe(0);

    // An honest client repeats one text: remembered, it never touches the new-document tokens.
    const honest = freshAddress();
    for (let i = 1; i <= free + 5; i++) {
      const hit = await postFrom(honest, query);
      expect([hit.status, hit.headers["x-cache"], remaining(hit)], `repeat ${i}`).toEqual([200, "HIT", START - i * CACHE_HIT_POINTS]);
    }
  });
});

describe("the largest documented request of each query passes alone under the default budget", () => {
  const schema = apiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
  const fields = Object.keys(largestDocumentedRequests(schema, 1));
  it.each(fields)("%s", async (field) => {
    const chainId = t.fixtures.sampleSettled?.chainId ?? 31337;
    const query = largestDocumentedRequests(schema, chainId)[field]!.replaceAll("0x000000000000000000000000000000000000dead", t.fixtures.whale);
    const answer = await postFrom(freshAddress(), query);
    expect(answer.body.errors?.map((e) => e.extensions.code) ?? []).not.toContain("RATE_LIMITED");
    expect(answer.status).not.toBe(429);
    const cost = costOf(answer);
    expect(cost?.requested).toBeLessThanOrEqual(START);
    expect(remaining(answer)).toBe(START - cost!.actual);
  });
});

/** GETs `path` from one loopback address: status and headers. */
function getFrom(localAddress: string, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(`${t.url}${path}`);
  return new Promise((resolve, reject) => {
    request({ host: url.hostname, port: url.port, path: url.pathname, localAddress }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on("error", reject)
      .end();
  });
}

describe("routes beside GraphQL", () => {
  it("charge /health, /schema.graphql and 404s a flat ROUTE_POINTS each, and say the budget", async () => {
    const address = freshAddress();
    const answers = [];
    for (const path of ["/health", "/schema.graphql", "/no-such-route", "/health"]) answers.push(await getFrom(address, path));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 200]);
    const left = answers.map((a) => Number(a.headers["ratelimit-remaining"]));
    expect(left[0]).toBeLessThan(Number(answers[0]!.headers["ratelimit-limit"]));
    expect(left.slice(1).map((value, i) => left[i]! - value)).toEqual([ROUTE_POINTS, ROUTE_POINTS, ROUTE_POINTS]);
  });
});
