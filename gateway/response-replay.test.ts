import { createHash } from "node:crypto";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Ask, ask, lasting } from "../test/raw-graphql.ts";
import { parse } from "graphql";
import { CACHE_HIT_POINTS } from "./points-budget.ts";
import { createMemoryResponseCacheStore, type ResponseCacheStore } from "./response-cache.ts";
import { tokensOf } from "./validation-work.ts";

// The response cache's byte path (gateway/response-replay.ts) over a small schema of its own, with
// the gateway's cache plugins and HTTP front: a hit is the miss's very bytes and headers, written
// without entering Apollo Server; what another request deserves is never served; the rules of
// gateway/response-cache.ts (errors, partial data, short maxAge, private, health) still decide.
// The same path over the real gateway and Redis: response-cache*.db.test.ts; its key: cache-key.test.ts;
// what it writes to its store and reads back: response-replay-store.test.ts.

import { BETS, executionCount, IDS, type Served, serve, setGeneration } from "../test/replay-server.ts";

describe("response cache byte path", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ store: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 64 * 1024 * 1024 }) });
  });
  afterAll(() => s?.close());
  beforeEach(() => {
    setGeneration("0");
  });

  it("replays a hit as the miss's very bytes and headers, without entering Apollo Server or resolving anything", async () => {
    const miss = await ask(s.url, { query: BETS, variables: { ids: IDS } });
    expect(miss.status).toBe(200);
    expect(miss.headers["x-cache"]).toBe("MISS");
    expect(miss.headers["cache-control"]).toBe("max-age=3600, public");
    expect(miss.body.length).toBeGreaterThan(10_000);
    const entered = s.entered();
    const executed = executionCount();

    const hit = await ask(s.url, { query: BETS, variables: { ids: IDS } });
    expect(hit.headers["x-cache"]).toBe("HIT");
    expect(Number(hit.headers.age)).toBeGreaterThanOrEqual(0);
    expect(hit.body.equals(miss.body)).toBe(true);
    expect(lasting(hit.headers)).toEqual(lasting(miss.headers));
    expect(s.entered()).toBe(entered);
    expect(executionCount()).toBe(executed);
  });

  it("stores the compressed representation it sent, and adds another the first time a hit asks for it", async () => {
    const ids = IDS.slice(0, 15);
    const br = await ask(s.url, { query: BETS, variables: { ids }, headers: { "accept-encoding": "br" } });
    expect([br.headers["x-cache"], br.headers["content-encoding"]]).toEqual(["MISS", "br"]);
    const entered = s.entered();

    const brHit = await ask(s.url, { query: BETS, variables: { ids }, headers: { "accept-encoding": "br" } });
    expect([brHit.headers["x-cache"], brHit.headers["content-encoding"]]).toEqual(["HIT", "br"]);
    expect(brHit.body.equals(br.body)).toBe(true);
    expect(lasting(brHit.headers)).toEqual(lasting(br.headers));

    const identity = await ask(s.url, { query: BETS, variables: { ids } });
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);

    const gzip = await ask(s.url, { query: BETS, variables: { ids }, headers: { "accept-encoding": "gzip" } });
    const gzipAgain = await ask(s.url, { query: BETS, variables: { ids }, headers: { "accept-encoding": "gzip" } });
    expect([gzip.headers["content-encoding"], gzipAgain.headers["content-encoding"]]).toEqual(["gzip", "gzip"]);
    expect(gunzipSync(gzip.body).equals(identity.body)).toBe(true);
    expect(gzipAgain.body.equals(gzip.body)).toBe(true);
    expect([identity, gzip, gzipAgain].map((r) => r.headers["x-cache"])).toEqual(["HIT", "HIT", "HIT"]);
    expect(s.entered()).toBe(entered);
  });

  it("reads GET and POST alike, and finds by APQ hash what the text stored; a hash that is not the text's goes to Apollo Server", async () => {
    const variables = { ids: IDS.slice(0, 3) };
    const posted = await ask(s.url, { query: BETS, variables });
    expect(posted.headers["x-cache"]).toBe("MISS");
    const entered = s.entered();
    const sha256Hash = createHash("sha256").update(BETS).digest("hex");
    const persisted = { persistedQuery: { version: 1, sha256Hash } };
    const get = await ask(s.url, { method: "GET", query: BETS, variables });
    const hashOnly = await ask(s.url, { method: "GET", variables, extensions: persisted });
    expect([get, hashOnly].map((r) => [r.headers["x-cache"], r.body.equals(posted.body)])).toEqual([
      ["HIT", true],
      ["HIT", true],
    ]);
    expect(s.entered()).toBe(entered);

    const wrongHash = { persistedQuery: { version: 1, sha256Hash: createHash("sha256").update("{ health }").digest("hex") } };
    const mismatch = await ask(s.url, { query: BETS, variables, extensions: wrongHash });
    expect(s.entered()).toBe(entered + 1);
    expect(JSON.parse(mismatch.body.toString()).errors).toBeDefined();
  });

  it("never serves one request's bytes to another (generated requests against an uncached server)", async () => {
    const reference = await serve();
    try {
      const TWO = `query A($id: ID!) { bet(id: $id) { id payout } } query B($id: ID!) { bet(id: $id) { id proof } }`;
      const request = fc.record({
        method: fc.constantFrom("GET" as const, "POST" as const),
        query: fc.constantFrom(`query One($id: ID!) { bet(id: $id) { id payout } }`, `query One($id: ID!) { bet(id: $id) { id  payout } }`, TWO),
        operationName: fc.constantFrom(undefined, null, "A", "B", "One"),
        variables: fc.oneof(
          fc.record({ id: fc.constantFrom("1", "2", "3") }),
          fc.record({ id: fc.constantFrom("1", "2"), other: fc.constantFrom(1, "1") }),
          fc.constant(undefined),
        ),
        accept: fc.constantFrom(undefined, "application/json", "application/graphql-response+json"),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 8 }), async (requests) => {
          for (const r of requests) {
            const a: Ask = {
              method: r.method,
              query: r.query,
              operationName: r.operationName,
              variables: r.variables,
              headers: r.accept ? { accept: r.accept } : {},
            };
            const [cached, fresh] = await Promise.all([ask(s.url, a), ask(reference.url, a)]);
            expect(cached.status).toBe(fresh.status);
            expect(cached.headers["content-type"]).toBe(fresh.headers["content-type"]);
            expect(cached.body.toString()).toBe(fresh.body.toString());
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      await reference.close();
    }
  });

  it("makes every stored answer unreachable when the data generation changes, and stores nothing while it is unknown", async () => {
    const variables = { ids: IDS.slice(0, 4) };
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("MISS");
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("HIT");
    setGeneration("1");
    const entered = s.entered();
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("MISS");
    expect(s.entered()).toBe(entered + 1);
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("HIT");

    setGeneration(undefined);
    for (let i = 0; i < 2; i++) expect((await ask(s.url, { query: BETS, variables: { ids: IDS.slice(0, 5) } })).headers["x-cache"]).toBe("MISS");
    expect(s.entered()).toBe(entered + 3);
  });

  it("never replays errors, partial data, short-lived, private or health answers", async () => {
    for (const query of [
      `{ broken { id } }`,
      `{ bet(id: "7") { id } broken { id } }`,
      `{ live(id: "7") { id } }`,
      `{ mine }`,
      `{ health bet(id: "8") { id } }`,
    ]) {
      const first = await ask(s.url, { query });
      const entered = s.entered();
      const executed = executionCount();
      const second = await ask(s.url, { query });
      expect([query, first.headers["x-cache"], second.headers["x-cache"]]).toEqual([query, "MISS", "MISS"]);
      expect(s.entered()).toBe(entered + 1);
      expect(executionCount()).toBeGreaterThan(executed);
    }
  });

  it("keys on the operation's declared variables only: an unused variable makes no new entry", async () => {
    const ids = IDS.slice(0, 7);
    const replies = [];
    for (const extra of [{}, { unused: 1 }, { unused: 2, other: "x" }]) replies.push(await ask(s.url, { query: BETS, variables: { ids, ...extra } }));
    expect(replies.map((r) => r.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT"]);
    expect(replies[2]!.body.equals(replies[0]!.body)).toBe(true);
  });

  it("keys on the normalised operation: comments, spaces, commas and an omitted operationName make no new entry", async () => {
    const ids = IDS.slice(0, 8);
    const replies = [];
    for (const [query, operationName] of [
      [BETS, "Page"],
      [`# a comment\n${BETS}`, undefined],
      [`query   Page ( $ids : [ID!]! ) {\n  bets(ids: $ids) { id, payout, proof } # trailing\n}`, undefined],
    ] as const) {
      replies.push(await ask(s.url, { query, operationName, variables: { ids } }));
    }
    expect(replies.map((r) => r.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT"]);
  });

  it("keys on declared variables canonically: a default applied, input keys in any order", async () => {
    const WITH_DEFAULT = `query Defaulted($ids: [ID!]! = ["31", "32"], $one: ID = "33") { bets(ids: $ids) { id payout } bet(id: $one) { id } }`;
    const replies = [];
    for (const variables of [undefined, { ids: ["31", "32"] }, { one: "33", ids: ["31", "32"] }])
      replies.push(await ask(s.url, { query: WITH_DEFAULT, variables }));
    expect(replies.map((r) => r.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT"]);
    // A declared variable that differs is another answer.
    expect((await ask(s.url, { query: WITH_DEFAULT, variables: { ids: ["31"] } })).headers["x-cache"]).toBe("MISS");
  });

  it("counts replayed hits in the response cache and request metrics", async () => {
    const count = (text: string, pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0);
    const hits = /^graphql_response_cache_total\{[^}]*result="hit"[^}]*\} (\d+)$/m;
    const pages = /^graphql_requests_total\{[^}]*operation="Page"[^}]*outcome="ok"[^}]*\} (\d+)$/m;
    const variables = { ids: IDS.slice(0, 6) };
    await ask(s.url, { query: BETS, variables });
    const before = await s.metrics();
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("HIT");
    const after = await s.metrics();
    expect(count(after, hits)).toBe(count(before, hits) + 1);
    expect(count(after, pages)).toBe(count(before, pages) + 1);
  });
});

describe("response cache byte path and its neighbours", () => {
  it("charges every hit its fixed price with RateLimit-* headers of its own, and never replays the cost of the request that computed it", async () => {
    const capacity = 100;
    const limited = await serve({ store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }), rateLimit: capacity });
    try {
      const miss = await ask(limited.url, { query: BETS, variables: { ids: IDS } });
      expect([miss.status, miss.headers["x-cache"], miss.headers["ratelimit-limit"]]).toEqual([200, "MISS", String(capacity)]);
      const { cost } = (JSON.parse(miss.body.toString("utf8")) as { extensions: { cost: { requested: number; actual: number } } }).extensions;
      expect(cost.actual).toBeGreaterThanOrEqual(CACHE_HIT_POINTS);
      let left = capacity - cost.actual;
      expect(miss.headers["ratelimit-remaining"]).toBe(String(left));
      const hits = [];
      while (left >= CACHE_HIT_POINTS) {
        const hit = await ask(limited.url, { query: BETS, variables: { ids: IDS } });
        left -= CACHE_HIT_POINTS;
        hits.push([hit.status, hit.headers["x-cache"], hit.headers["ratelimit-remaining"]]);
        // The stored bytes are the answer without the computing request's cost: no cost is replayed.
        expect(JSON.parse(hit.body.toString("utf8"))).not.toHaveProperty("extensions");
        expect(JSON.parse(hit.body.toString("utf8")).data).toEqual(JSON.parse(miss.body.toString("utf8")).data);
      }
      expect(hits.length).toBeGreaterThanOrEqual(2);
      expect(hits).toEqual(hits.map((_, i) => [200, "HIT", String(capacity - cost.actual - CACHE_HIT_POINTS * (i + 1))]));
      const refused = await ask(limited.url, { query: BETS, variables: { ids: IDS } });
      expect([refused.status, refused.headers["x-cache"], refused.headers["ratelimit-remaining"]]).toEqual([429, undefined, String(left)]);
      expect(JSON.parse(refused.body.toString("utf8")).errors[0].extensions).toMatchObject({
        code: "RATE_LIMITED",
        retryAfterSeconds: CACHE_HIT_POINTS - left,
      });
    } finally {
      await limited.close();
    }
  });

  it("asks the points budget to price a hit only when its key meant parsing its text, and sends its refusal instead of the hit", async () => {
    const priced: number[] = [];
    let refuse = false;
    const refusal = { status: 429, headers: [["retry-after", "3"]] as [string, string][], body: '{"errors":[]}' };
    const served = await serve({
      store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }),
      chargeNewDocument: async (_req, tokens) => {
        priced.push(tokens);
        return refuse ? { refusal } : { headers: [["ratelimit-remaining", "42"]] };
      },
    });
    try {
      const variables = { ids: IDS.slice(0, 4) };
      const query = `# stored ${Math.random()}\n${BETS}`;
      expect((await ask(served.url, { query, variables })).headers["x-cache"]).toBe("MISS"); // Apollo Server prices a miss's new text
      const remembered = await ask(served.url, { query, variables });
      const sha256Hash = createHash("sha256").update(query).digest("hex");
      const byHash = await ask(served.url, { method: "GET", variables, extensions: { persistedQuery: { version: 1, sha256Hash } } });
      expect([remembered, byHash].map((r) => r.headers["x-cache"])).toEqual(["HIT", "HIT"]);
      expect(priced).toEqual([]);
      const variant = await ask(served.url, { query: `# a new comment\n${query}`, variables });
      expect([variant.headers["x-cache"], variant.headers["ratelimit-remaining"]]).toEqual(["HIT", "42"]);
      expect(priced).toEqual([tokensOf(parse(BETS))]);
      refuse = true;
      const entered = served.entered();
      const refused = await ask(served.url, { query: `# another\n${query}`, variables });
      expect([refused.status, refused.headers["retry-after"], refused.headers["x-cache"], refused.body.toString("utf8")]).toEqual([
        429,
        "3",
        undefined,
        refusal.body,
      ]);
      expect(served.entered()).toBe(entered);
    } finally {
      await served.close();
    }
  });

  it("does not store an answer larger than the entry bound (it is served, every time computed)", async () => {
    const bounded = await serve({
      store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }),
      bounds: { maxEntryBytes: 8 * 1024 },
    });
    try {
      const large = [await ask(bounded.url, { query: BETS, variables: { ids: IDS } }), await ask(bounded.url, { query: BETS, variables: { ids: IDS } })];
      expect(large[0]!.body.length).toBeGreaterThan(8 * 1024);
      expect(large.map((r) => `${r.status} ${r.headers["x-cache"]}`)).toEqual(["200 MISS", "200 MISS"]);
      const small = [await ask(bounded.url, { query: BETS, variables: { ids: ["1"] } }), await ask(bounded.url, { query: BETS, variables: { ids: ["1"] } })];
      expect(small.map((r) => r.headers["x-cache"])).toEqual(["MISS", "HIT"]);
    } finally {
      await bounded.close();
    }
  });

  it("lets one client create at most its budget of new entries a minute; past it answers are served, not stored", async () => {
    let clock = 1_700_000_000_000;
    const budgeted = await serve({
      store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }),
      bounds: { newEntriesPerMinute: 2 },
      now: () => clock,
    });
    try {
      const page = (id: string) => ask(budgeted.url, { query: BETS, variables: { ids: [id] } });
      const first = [await page("41"), await page("42"), await page("43")];
      expect(first.map((r) => `${r.status} ${r.headers["x-cache"]}`)).toEqual(["200 MISS", "200 MISS", "200 MISS"]);
      // The first two were stored; the third, past the budget, was not.
      const again = [await page("41"), await page("42"), await page("43")];
      expect(again.map((r) => r.headers["x-cache"])).toEqual(["HIT", "HIT", "MISS"]);
      // A minute later the client may add entries again.
      clock += 60_000;
      expect([(await page("43")).headers["x-cache"], (await page("43")).headers["x-cache"]]).toEqual(["MISS", "HIT"]);
    } finally {
      await budgeted.close();
    }
  });

  it("answers variables nested as deep as the body allows without a 5xx: refused at the door (core/json-depth.ts), never keyed or stored", async () => {
    const deep = await serve({ store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }) });
    try {
      const raw = `{"query":"query Page($ids: [ID!]!) { bets(ids: $ids) { id } }","variables":{"ids":${"[".repeat(30_000)}${"]".repeat(30_000)}}}`;
      const replies = [await ask(deep.url, { raw }), await ask(deep.url, { raw })];
      expect(replies.map((r) => [r.status, r.headers["x-cache"]])).toEqual([
        [400, undefined],
        [400, undefined],
      ]);
    } finally {
      await deep.close();
    }
  });

  it("answers through Apollo Server when the store is away (reads miss, writes fail)", async () => {
    const away: ResponseCacheStore = {
      get: async () => undefined, // what the Redis store answers while Redis is away or slow
      set: () => Promise.reject(new Error("down")),
      delete: () => Promise.reject(new Error("down")),
    };
    const down = await serve({ store: away });
    try {
      const replies = [await ask(down.url, { query: BETS, variables: { ids: IDS } }), await ask(down.url, { query: BETS, variables: { ids: IDS } })];
      expect(replies.map((r) => [r.status, r.headers["x-cache"]])).toEqual([
        [200, "MISS"],
        [200, "MISS"],
      ]);
      expect(down.entered()).toBe(2);
    } finally {
      await down.close();
    }
  });
});
