import { createHash } from "node:crypto";
import { HeaderMap, type HTTPGraphQLRequest } from "@apollo/server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cacheKeyOf } from "./cache-key.ts";
import { tokensOf } from "./validation-work.ts";
import { parse } from "graphql";

// The response cache's key (gateway/cache-key.ts): what Apollo Server would read of a request,
// normalised, and only that. Over HTTP, with the byte path: response-replay.test.ts.

describe("cacheKeyOf", () => {
  const keyOf = (request: HTTPGraphQLRequest, generation: string) => cacheKeyOf(request, generation)?.key;
  const headers = (accept?: string) => new HeaderMap(accept ? [["accept", accept]] : []);
  const post = (body: unknown, accept?: string): HTTPGraphQLRequest => ({ method: "POST", headers: headers(accept), search: "", body });
  const get = (search: string): HTTPGraphQLRequest => ({ method: "GET", headers: headers(), search, body: undefined });

  it("gives GET and POST of the same fields one key, and absent or null fields the same key", () => {
    const query = "{ bet(id: 1) { id } }";
    const key = keyOf(post({ query }), "0");
    expect(key).toBeDefined();
    expect(keyOf(get(`?${new URLSearchParams({ query })}`), "0")).toBe(key);
    expect(keyOf(post({ query, operationName: null, variables: null, extensions: null }), "0")).toBe(key);
    expect(keyOf(post({ query, variables: {} }), "0")).toBe(key);
    expect(keyOf(post({ query }), "1")).not.toBe(key);
    expect(keyOf(post({ query }, "application/graphql-response+json"), "0")).not.toBe(key);
  });

  it("says the tokens of a text it parsed for this request, and nothing for one it remembers (the points budget prices the parse)", () => {
    const query = `# a comment of its own ${Math.random()}\n{ bet(id: 1) { id } }`;
    const first = cacheKeyOf(post({ query }), "0");
    expect(first?.parsedTokens).toBe(tokensOf(parse(query)));
    expect(first?.parsedTokens).toBe(11); // comments do not count
    // Counted as tokensOf counts them (the price of a new document), whatever the text holds.
    for (const text of [`query A($a: [ID] = ["x", 1.5e3]) { b(c: $a, d: """block\n"""), e @f } # ${Math.random()}`, `{ a ,,, ...on B { c } }`]) {
      expect(cacheKeyOf(post({ query: text, operationName: text.startsWith("query") ? "A" : undefined }), "0")?.parsedTokens).toBe(tokensOf(parse(text)));
    }
    const again = cacheKeyOf(post({ query }), "0");
    expect(again).toEqual({ key: first?.key });
    // Found by its APQ hash: remembered, not parsed.
    const sha256Hash = createHash("sha256").update(query).digest("hex");
    expect(cacheKeyOf(post({ extensions: { persistedQuery: { version: 1, sha256Hash } } }), "0")).toEqual({ key: first?.key });
    // A long text is remembered, whatever makes it long (blanks, comments, a large default): memory
    // is bounded by the characters the remembered documents keep, in all.
    const long = `# ${"x".repeat(17 * 1024)}\n{ bet(id: 1) { id } } # ${Math.random()}`;
    expect([cacheKeyOf(post({ query: long }), "0")?.parsedTokens, cacheKeyOf(post({ query: long }), "0")?.parsedTokens]).toEqual([11, undefined]);
    const large = { query: `query A($a: String = "${"y".repeat(17 * 1024)}") { bet(id: $a) { id } } # ${Math.random()}`, operationName: "A" };
    expect([cacheKeyOf(post(large), "0")?.parsedTokens, cacheKeyOf(post(large), "0")?.parsedTokens]).toEqual([tokensOf(parse(large.query)), undefined]);
  });

  it("remembers a long text it parsed for a request that has no key (an operation name not in it): Apollo Server, which remembers the text, prices no new document for the next one", () => {
    // Over 16 KiB of padding: before, each such request was parsed and printed again here at the door's price.
    const text = `query A { bet(id: 1) { id } } # ${Math.random()}${" ".repeat(17 * 1024)}`;
    expect(cacheKeyOf(post({ query: text, operationName: "Nope" }), "0")).toBeUndefined();
    expect(cacheKeyOf(post({ query: text, operationName: "A" }), "0")).toEqual({ key: expect.any(String) });
  });

  it("keeps an input object's own __proto__ key: a request Apollo Server refuses never shares the key of one it answers", () => {
    const query = `query ($filter: Filter) { bets(filter: $filter) { id } }`;
    // As JSON.parse builds it: an own property named __proto__, not a prototype.
    const withProto = JSON.parse('{"filter": {"__proto__": {"status": "SETTLED"}}}') as Record<string, unknown>;
    expect(keyOf(post({ query, variables: withProto }), "0")).not.toBe(keyOf(post({ query, variables: { filter: {} } }), "0"));
  });

  it("folds away what does not change the answer: comments, whitespace, undeclared variables, key order, defaults", () => {
    const query = `query One($id: ID!, $filter: Filter = { a: 1, b: [2] }) { bet(id: $id, filter: $filter) { id } }`;
    const key = keyOf(post({ query, variables: { id: "1" } }), "0");
    expect(key).toBeDefined();
    for (const same of [
      { query: `# why\n${query.replace(/ /g, "  ")}`, variables: { id: "1" } },
      { query, operationName: "One", variables: { id: "1", unused: [1, 2, 3] } },
      { query, variables: { filter: { b: [2], a: 1 }, id: "1" } },
    ]) {
      expect(keyOf(post(same), "0")).toBe(key);
    }
    for (const other of [
      { query, variables: { id: "2" } },
      { query, variables: { id: "1", filter: null } },
      { query, variables: { id: "1", filter: { a: 1 } } },
    ]) {
      expect(keyOf(post(other), "0")).not.toBe(key);
    }
  });

  it("has no key for a document that does not parse, nor for an operation it does not hold", () => {
    expect(keyOf(post({ query: "{ bet(id: 1) { id }" }), "0")).toBeUndefined();
    expect(keyOf(post({ query: "query A { a } query B { b }" }), "0")).toBeUndefined();
    expect(keyOf(post({ query: "query A { a }", operationName: "B" }), "0")).toBeUndefined();
    expect(keyOf(post({ query: "query A { a } query B { b }", operationName: "B" }), "0")).toBeDefined();
  });

  it("has no key, and never throws, for variables nested deeper than the stack allows", () => {
    const deep = JSON.parse(`${"[".repeat(30_000)}${"]".repeat(30_000)}`) as unknown;
    expect(keyOf(post({ query: "query A($ids: [ID]) { a(ids: $ids) }", variables: { ids: deep } }), "0")).toBeUndefined();
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
      expect(keyOf(request, "0")).toBeUndefined();
    }
  });

  it("gives different keys to requests that differ in operation, operation name or declared variables (generated)", () => {
    const documents = [
      "query A($id: ID!) { bet(id: $id) { id } }",
      "query A($id: ID!) { bet(id: $id) { payout } }",
      "query B($id: ID!) { bet(id: $id) { id } }",
      "query A($id: ID!, $ids: [ID!]) { bet(id: $id) { id } bets(ids: $ids) { id } }",
      'query A($id: ID! = "1") { bet(id: $id) { id } }',
    ];
    const fields = fc.record(
      {
        query: fc.constantFrom(...documents.keys()),
        operationName: fc.option(fc.constantFrom("A", "B"), { nil: undefined }),
        variables: fc.option(fc.dictionary(fc.constantFrom("id", "ids", "other"), fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
      },
      { requiredKeys: ["query"] },
    );
    const sorted = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sorted)
        : value && typeof value === "object"
          ? Object.fromEntries(
              Object.entries(value)
                .sort(([x], [y]) => (x < y ? -1 : 1))
                .map(([k, v]) => [k, sorted(v)]),
            )
          : value;
    // What the operation runs with: its document, its name, and the variables it declares (given, else defaulted).
    const view = (f: { query: number; operationName?: string; variables?: Record<string, unknown> }) => {
      const text = documents[f.query]!;
      const name = /^query (\w+)/.exec(text)![1]!;
      if (f.operationName !== undefined && f.operationName !== name) return undefined;
      const given = JSON.parse(JSON.stringify(f.variables ?? {})) as Record<string, unknown>;
      const values = [...text.matchAll(/\$(\w+): [^,)= ]+( = "1")?/g)].flatMap(([, variable, defaulted]) =>
        Object.hasOwn(given, variable!) ? [[variable, sorted(given[variable!])]] : defaulted ? [[variable, "1"]] : [],
      );
      return JSON.stringify([f.query, name, values]);
    };
    const post = (f: { query: number; operationName?: string; variables?: Record<string, unknown> }, accept?: string) =>
      ({
        method: "POST",
        headers: new HeaderMap(accept ? [["accept", accept]] : []),
        search: "",
        body: { ...f, query: documents[f.query] },
      }) as HTTPGraphQLRequest;
    type Fields = { query: number; operationName?: string; variables?: Record<string, unknown> };
    const copy = (f: Fields): Fields => JSON.parse(JSON.stringify(f)) as Fields;
    // Two independent requests rarely run the same: most pairs are one request and a copy of it,
    // with its variables reordered, one field changed, or one variable's value changed.
    const pairs = fields.chain((a) =>
      fc.oneof(
        fields.map((b) => [a, b] as const),
        fc.constant([a, copy(a)] as const),
        fc.constant([a, { ...copy(a), variables: Object.fromEntries(Object.entries(copy(a).variables ?? {}).reverse()) }] as const),
        fields.map((b) => [a, { ...copy(a), query: b.query }] as const),
        fields.map((b) => [a, { ...copy(a), operationName: b.operationName }] as const),
        fc
          .tuple(fc.constantFrom("id", "ids", "other"), fc.jsonValue({ maxDepth: 2 }))
          .map(([name, value]) => [a, { ...copy(a), variables: { ...copy(a).variables, [name]: value } }] as const),
      ),
    );
    const seen = { same: 0, different: 0 };
    fc.assert(
      fc.property(pairs, ([a, b]) => {
        const keyA = keyOf(post(a), "0");
        const keyB = keyOf(post(b), "0");
        expect(keyA === undefined).toBe(view(a) === undefined);
        if (keyA === undefined || keyB === undefined) return;
        const same = view(a) === view(b);
        seen[same ? "same" : "different"]++;
        expect(keyA === keyB).toBe(same);
      }),
      { numRuns: 2000 },
    );
    // Both halves of the property were tried, whatever the run's seed.
    expect(seen.same).toBeGreaterThan(200);
    expect(seen.different).toBeGreaterThan(200);
  });
});
