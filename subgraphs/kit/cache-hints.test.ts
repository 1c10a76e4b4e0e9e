import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse, type GraphQLObjectType } from "graphql";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { cacheFor, instrumentCacheHints } from "./cache-hints.ts";
import { createSubgraph } from "./subgraph.ts";
import type { GraphQLResolveInfo } from "graphql";

// The subgraphs' Cache-Control rule without Apollo's per-field plugin: a hint replaces a field's
// default, root and object-typed fields without a hint count as `live` (2 s), leaves without one
// do not count, the response gets the minimum (or no-store).
const typeDefs = parse(`
  type Query { hinted: Thing  unhinted: Thing  leaf: Int  }
  type Thing { id: Int  slow: Int  child: Thing  hintedChild: Thing  forever: Thing  references: [Thing] }
`);
const info = (i: unknown) => i as GraphQLResolveInfo;
const resolvers = {
  Query: {
    hinted: (_p: unknown, _a: unknown, _c: unknown, i: unknown) => {
      cacheFor(info(i), 3600);
      return { id: 1, forever: { id: 7, forever: { id: 8 } } };
    },
    unhinted: () => ({ id: 2 }),
    leaf: (_p: unknown, _a: unknown, _c: unknown, i: unknown) => {
      cacheFor(info(i), 60);
      return 3;
    },
  },
  Thing: {
    slow: async (_p: unknown, _a: unknown, _c: unknown, i: unknown) => {
      await new Promise((r) => setTimeout(r, 5));
      cacheFor(info(i), 30); // after an await: still counted
      return 4;
    },
    child: () => ({ id: 5 }),
    hintedChild: (_p: unknown, _a: unknown, _c: unknown, i: unknown) => {
      cacheFor(info(i), 600);
      cacheFor(info(i), 120);
      return { id: 6 };
    },
    // As `_entities` does: one field, one resolve info, a hint per reference (a live bet first).
    references: (_p: unknown, _a: unknown, _c: unknown, i: unknown) => {
      cacheFor(info(i), 2);
      cacheFor(info(i), 3600);
      return [{ id: 9 }, { id: 10 }];
    },
  },
};

async function header(query: string, finalFields?: readonly string[]): Promise<string | undefined> {
  const subgraph = createSubgraph({
    name: "t",
    typeDefs,
    resolvers,
    context: () => ({}),
    logger: pino({ level: "silent" }),
    production: true,
    ...(finalFields ? { finalFields } : {}),
  });
  const http = await subgraph.listen("127.0.0.1", 0);
  try {
    // Twice: an operation runs on graphql-js the first time, compiled after (kit/executor.ts); both must hint alike.
    const headers: (string | null)[] = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${http.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { errors?: unknown }).errors).toBeUndefined();
      headers.push(response.headers.get("cache-control"));
    }
    expect(subgraph.executorStats!.compiledRuns + subgraph.executorStats!.fallbackRuns).toBe(2);
    expect(headers[1]).toBe(headers[0]);
    return headers[0] ?? undefined;
  } finally {
    await subgraph.stop();
  }
}

describe("subgraph cache hints, gathered once per response", () => {
  it("takes a root field's hint, ignoring unhinted leaves", async () => {
    expect(await header("{ hinted { id } }")).toBe("max-age=3600, public");
  });
  it("counts an object-typed field without a hint as live", async () => {
    expect(await header("{ hinted { id child { id } } }")).toBe("max-age=2, public");
    expect(await header("{ unhinted { id } }")).toBe("max-age=2, public");
  });
  it("takes the minimum over hinted fields, over the hints of one field, and hints set after an await", async () => {
    expect(await header("{ hinted { hintedChild { id } } }")).toBe("max-age=120, public");
    expect(await header("{ hinted { references { id } } }")).toBe("max-age=2, public");
    expect(await header("{ hinted { slow hintedChild { id } } }")).toBe("max-age=30, public");
    expect(await header("{ leaf hinted { id } }")).toBe("max-age=60, public");
  });
  it("leaves a field declared final unwrapped and uncounted: it cannot lower the minimum", async () => {
    expect(await header("{ hinted { forever { id } } }")).toBe("max-age=2, public"); // undeclared: counts as live
    expect(await header("{ hinted { forever { id forever { id } } } }", ["Thing.forever"])).toBe("max-age=3600, public");
    expect(await header("{ hinted { forever { id child { id } } } }", ["Thing.forever"])).toBe("max-age=2, public");
    const schema = instrumentCacheHints(buildSubgraphSchema({ typeDefs, resolvers }), 2, ["Thing.forever"]);
    expect((schema.getType("Thing") as GraphQLObjectType).getFields().forever?.resolve).toBeUndefined();
    expect((schema.getType("Thing") as GraphQLObjectType).getFields().child?.resolve).toBeTypeOf("function");
    for (const wrong of ["Thing.nothing", "Nothing.id", "Query.hinted", "Thing"]) {
      expect(() => instrumentCacheHints(buildSubgraphSchema({ typeDefs, resolvers }), 2, [wrong])).toThrow(`finalFields: ${wrong} is not a field`);
    }
  });
  it("answers introspection-only requests uncacheable", async () => {
    expect(await header("{ __typename }")).toBe("no-store");
  });
});
