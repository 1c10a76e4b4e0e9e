import { createHash } from "node:crypto";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { ApolloServer, HeaderMap, type HTTPGraphQLRequest } from "@apollo/server";
import { ApolloServerPluginCacheControl } from "@apollo/server/plugin/cacheControl";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_COMPRESSION } from "../core/compression.ts";
import { createGraphQLRequestListener, listen, type RunningHttpServer } from "../core/http.ts";
import { silentLogger } from "../core/logger.ts";
import { createServiceMetrics } from "../core/metrics.ts";
import { cachePolicyPlugin } from "./cache-policy.ts";
import { createMemoryRateLimitStore, createRateLimitGuard } from "./rate-limit.ts";
import { createMemoryResponseCacheStore, createResponseCache, type DataGeneration, type ResponseCacheStore } from "./response-cache.ts";
import { createResponseReplay, replayKeyOf } from "./response-replay.ts";

// The response cache's byte path (gateway/response-replay.ts) over a small schema of its own, with
// the gateway's cache plugins and HTTP front: a hit is the miss's very bytes and headers, written
// without entering Apollo Server; what another request deserves is never served; the rules of
// gateway/response-cache.ts (errors, partial data, short maxAge, private, health) still decide.
// The same path over the real gateway and Redis: response-cache*.db.test.ts.

const TYPE_DEFS = `#graphql
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
  type Bet { id: ID! payout: String! proof: String! }
  type Query {
    bet(id: ID!): Bet @cacheControl(maxAge: 3600)
    bets(ids: [ID!]!): [Bet!]! @cacheControl(maxAge: 3600)
    live(id: ID!): Bet @cacheControl(maxAge: 2)
    broken: Bet @cacheControl(maxAge: 3600)
    mine: String @cacheControl(maxAge: 3600, scope: PRIVATE)
    health: String @cacheControl(maxAge: 3600)
  }
`;

let executions = 0;
const betOf = (id: string) => ({ id, payout: `${id}000`, proof: `proof-of-${id}-`.repeat(40) });
/** A resolver that counts its runs (a hit runs none). */
const counted =
  <A, R>(resolve: (args: A) => R) =>
  (_: unknown, args: A): R => {
    executions++;
    return resolve(args);
  };
const resolvers = {
  Query: {
    bet: counted(({ id }: { id: string }) => betOf(id)),
    bets: counted(({ ids }: { ids: string[] }) => ids.map(betOf)),
    live: counted(({ id }: { id: string }) => betOf(id)),
    broken: counted(() => {
      throw new Error("no such bet");
    }),
    mine: counted(() => "yours"),
    health: counted(() => "UP"),
  },
};

interface Served {
  url: string;
  /** How many requests entered Apollo Server. */
  entered: () => number;
  metrics: () => Promise<string>;
  close(): Promise<void>;
}

let generation: string | undefined = "0";
const fakeGeneration: DataGeneration = { current: () => generation, stop: () => undefined };

/** The schema behind core/http.ts, with the response cache (and the rate limit) when given. */
async function serve(options: { store?: ResponseCacheStore; rateLimit?: number } = {}): Promise<Served> {
  const metrics = createServiceMetrics("test", { defaultMetrics: false });
  const cache = options.store ? createResponseCache(options.store, { registry: metrics.registry, generation: fakeGeneration, metrics }) : undefined;
  const server = new ApolloServer({
    typeDefs: TYPE_DEFS,
    resolvers,
    csrfPrevention: false,
    plugins: [ApolloServerPluginCacheControl(), cachePolicyPlugin(), metrics.plugin, ...(cache ? [cache.plugin] : [])],
    logger: silentLogger(),
  });
  await server.start();
  let entered = 0;
  const execute = server.executeHTTPGraphQLRequest.bind(server);
  server.executeHTTPGraphQLRequest = (args) => {
    entered++;
    return execute(args);
  };
  const policy = { limit: options.rateLimit ?? 1, windowSeconds: 3600 };
  const running: RunningHttpServer = await listen(
    createGraphQLRequestListener({
      server,
      context: async () => ({}),
      maxBodyBytes: 65_536,
      compression: DEFAULT_COMPRESSION,
      routes: { "/metrics": metrics.route },
      admit: options.rateLimit
        ? createRateLimitGuard({ store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 0, logger: silentLogger() })
        : undefined,
      beforeGraphQL: cache?.beforeGraphQL,
    }),
    "127.0.0.1",
    0,
  );
  return {
    url: running.url,
    entered: () => entered,
    metrics: async () => (await fetch(`${running.url}/metrics`)).text(),
    async close() {
      await running.close(0);
      await server.stop();
    },
  };
}

interface Ask {
  method?: "GET" | "POST";
  query?: string;
  operationName?: string | null;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** A POST body as is (instead of one built from the fields above). */
  raw?: string;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (fetch would decompress and hide what was sent). */
function ask(url: string, a: Ask): Promise<Reply> {
  const fields: Record<string, unknown> = {};
  if (a.query !== undefined) fields.query = a.query;
  if (a.operationName !== undefined) fields.operationName = a.operationName;
  if (a.variables !== undefined) fields.variables = a.variables;
  if (a.extensions !== undefined) fields.extensions = a.extensions;
  const get = a.method === "GET";
  const search = new URLSearchParams();
  if (get) for (const [name, value] of Object.entries(fields)) if (value !== null) search.set(name, typeof value === "string" ? value : JSON.stringify(value));
  const payload = get ? undefined : (a.raw ?? JSON.stringify(fields));
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/graphql${get ? `?${search}` : ""}`,
      { method: a.method ?? "POST", headers: { ...(get ? {} : { "content-type": "application/json" }), ...a.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Headers that differ between any two answers (per request, per clock, per hit). */
const PER_ANSWER = new Set(["date", "x-request-id", "x-cache", "age", "ratelimit-remaining", "ratelimit-reset", "connection", "keep-alive"]);
const lasting = (headers: Reply["headers"]) => Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_ANSWER.has(name)));

const BETS = `query Page($ids: [ID!]!) { bets(ids: $ids) { id payout proof } }`;
const IDS = Array.from({ length: 20 }, (_, i) => String(i + 1));

describe("response cache byte path", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ store: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 64 * 1024 * 1024 }) });
  });
  afterAll(() => s?.close());
  beforeEach(() => {
    generation = "0";
  });

  it("replays a hit as the miss's very bytes and headers, without entering Apollo Server or resolving anything", async () => {
    const miss = await ask(s.url, { query: BETS, variables: { ids: IDS } });
    expect(miss.status).toBe(200);
    expect(miss.headers["x-cache"]).toBe("MISS");
    expect(miss.headers["cache-control"]).toBe("max-age=3600, public");
    expect(miss.body.length).toBeGreaterThan(10_000);
    const entered = s.entered();
    const executed = executions;

    const hit = await ask(s.url, { query: BETS, variables: { ids: IDS } });
    expect(hit.headers["x-cache"]).toBe("HIT");
    expect(Number(hit.headers.age)).toBeGreaterThanOrEqual(0);
    expect(hit.body.equals(miss.body)).toBe(true);
    expect(lasting(hit.headers)).toEqual(lasting(miss.headers));
    expect(s.entered()).toBe(entered);
    expect(executions).toBe(executed);
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
    generation = "1";
    const entered = s.entered();
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("MISS");
    expect(s.entered()).toBe(entered + 1);
    expect((await ask(s.url, { query: BETS, variables })).headers["x-cache"]).toBe("HIT");

    generation = undefined;
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
      const executed = executions;
      const second = await ask(s.url, { query });
      expect([query, first.headers["x-cache"], second.headers["x-cache"]]).toEqual([query, "MISS", "MISS"]);
      expect(s.entered()).toBe(entered + 1);
      expect(executions).toBeGreaterThan(executed);
    }
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
  it("still charges every hit to the client's rate limit", async () => {
    const limited = await serve({ store: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }), rateLimit: 3 });
    try {
      const replies = [];
      for (let i = 0; i < 4; i++) replies.push(await ask(limited.url, { query: BETS, variables: { ids: IDS } }));
      expect(replies.map((r) => [r.status, r.headers["x-cache"], r.headers["ratelimit-remaining"]])).toEqual([
        [200, "MISS", "2"],
        [200, "HIT", "1"],
        [200, "HIT", "0"],
        [429, undefined, "0"],
      ]);
    } finally {
      await limited.close();
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

  it("replays only what the store holds now: another write under the same key is decoded afresh", async () => {
    const memory = createMemoryResponseCacheStore({ maxEntries: 10, maxBytes: 1024 * 1024 });
    const written: string[] = [];
    const store: ResponseCacheStore = {
      get: (key) => memory.get(key),
      set: (key, value, options) => {
        written.push(key);
        return memory.set(key, value, options);
      },
      delete: (key) => memory.delete(key),
    };
    const at = 1_700_000_000_000; // one clock reading for both writes: only the write itself tells them apart
    const replay = createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }), now: () => at });
    const request = (): HTTPGraphQLRequest => ({ method: "POST", headers: new HeaderMap(), search: "", body: { query: BETS } });
    const storeAnswer = async (body: string) => {
      const miss = request();
      expect(await replay.answer(miss)).toBeUndefined();
      replay.answered?.(miss, { status: 200, headers: [["content-type", "application/json"]], body }, undefined, "graphql");
      await new Promise((resolve) => setImmediate(resolve));
    };
    const replayed = async () => (await replay.answer(request()))?.body.toString();

    await storeAnswer('{"data":{"a":1}}');
    expect([await replayed(), await replayed()]).toEqual(['{"data":{"a":1}}', '{"data":{"a":1}}']);
    await memory.delete(written[0]!);
    await storeAnswer('{"data":{"a":2}}');
    expect(written).toHaveLength(2);
    expect(written[1]).toBe(written[0]);
    expect(await replayed()).toBe('{"data":{"a":2}}');
  });

  it("takes a store that throws for a miss", async () => {
    const replay = createResponseReplay({
      store: { get: () => Promise.reject(new Error("down")), set: () => Promise.reject(new Error("down")), delete: () => Promise.reject(new Error("down")) },
      decisionFor: () => undefined,
    });
    const request: HTTPGraphQLRequest = { method: "POST", headers: new HeaderMap(), search: "", body: { query: BETS } };
    await expect(replay.answer(request)).resolves.toBeUndefined();
  });
});

describe("replayKeyOf", () => {
  const headers = (accept?: string) => new HeaderMap(accept ? [["accept", accept]] : []);
  const post = (body: unknown, accept?: string): HTTPGraphQLRequest => ({ method: "POST", headers: headers(accept), search: "", body });
  const get = (search: string): HTTPGraphQLRequest => ({ method: "GET", headers: headers(), search, body: undefined });

  it("gives GET and POST of the same fields one key, and absent or null fields the same key", () => {
    const query = "{ bet(id: 1) { id } }";
    const key = replayKeyOf(post({ query }), "0");
    expect(key).toBeDefined();
    expect(replayKeyOf(get(`?${new URLSearchParams({ query })}`), "0")).toBe(key);
    expect(replayKeyOf(post({ query, operationName: null, variables: null, extensions: null }), "0")).toBe(key);
    expect(replayKeyOf(post({ query, variables: {} }), "0")).toBe(key);
    expect(replayKeyOf(post({ query }), "1")).not.toBe(key);
    expect(replayKeyOf(post({ query }, "application/graphql-response+json"), "0")).not.toBe(key);
  });

  it("has no key for what it cannot read as Apollo Server does", () => {
    const query = "{ a }";
    for (const request of [
      post({}),
      post([{ query }]),
      post(`{"query":"${query}"}`),
      post({ query: 1 }),
      post({ query, variables: "{}" }),
      post({ query, variables: [] }),
      post({ query, operationName: 3 }),
      post({ query, extensions: { persistedQuery: { version: 2, sha256Hash: "0".repeat(64) } } }),
      post({ query, extensions: { other: true } }),
      post({ extensions: { persistedQuery: { version: 1, sha256Hash: "A".repeat(64) } } }),
      post({ variables: {} }),
      get(`?query=${encodeURIComponent(query)}&query=${encodeURIComponent(query)}`),
      get(`?query=${encodeURIComponent(query)}&variables=not-json`),
      get(`?query=${encodeURIComponent(query)}&variables=null`),
      { method: "HEAD", headers: headers(), search: `?query=${encodeURIComponent(query)}`, body: undefined },
    ]) {
      expect(replayKeyOf(request, "0")).toBeUndefined();
    }
  });

  it("gives one key to requests equal in query, operation name and variables, and different keys otherwise (generated)", () => {
    type Fields = { query: string; operationName?: string | null; variables?: Record<string, unknown> | null };
    const fields: fc.Arbitrary<Fields> = fc.record(
      {
        query: fc.string({ maxLength: 12 }),
        operationName: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
        variables: fc.option(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
      },
      { requiredKeys: ["query"] },
    );
    const copy = (f: Fields): Fields => JSON.parse(JSON.stringify(f)) as Fields;
    // Two independent requests almost never agree: half the pairs are one request and a copy of it
    // (as a copy, with absent fields as null or {}, or with one field changed).
    const pair = fields.chain((a) =>
      fc.oneof(
        fields.map((b) => [a, b] as const),
        fc.constant([a, copy(a)] as const),
        fc.constant([a, { ...copy(a), operationName: a.operationName ?? null, variables: a.variables ?? (a.query.length % 2 ? null : {}) }] as const),
        fields.map((b) => [a, { ...copy(a), query: b.query }] as const),
        fields.map((b) => [a, { ...copy(a), operationName: b.operationName }] as const),
        fields.map((b) => [a, { ...copy(a), variables: b.variables }] as const),
        // The same variable names, a value changed.
        fc.jsonValue({ maxDepth: 2 }).map((value) => {
          const variables = copy(a).variables ?? {};
          const name = Object.keys(variables)[0] ?? "";
          return [a, { ...copy(a), variables: { ...variables, [name]: value } }] as const;
        }),
      ),
    );
    const view = (f: Fields) => JSON.stringify([f.query, f.operationName ?? null, JSON.parse(JSON.stringify(f.variables ?? {}))]);
    let same = 0;
    let different = 0;
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const keyA = replayKeyOf(post(a), "0");
        const keyB = replayKeyOf(post(b), "0");
        expect(keyA).toBeDefined();
        const equal = view(a) === view(b);
        if (equal) same++;
        else different++;
        expect(keyA === keyB).toBe(equal);
      }),
      { numRuns: 2000 },
    );
    // Both halves of the claim were tried, many times.
    expect(Math.min(same, different)).toBeGreaterThan(300);
  });
});
