import { ApolloServer, type BaseContext } from "@apollo/server";
import { ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import fc from "fast-check";
import { GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, parse, printSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { scalarResolvers } from "../../core/scalars.ts";
import { buildFederatedSchema, loadSdl } from "../../core/schema.ts";
import { createCompiledExecutor } from "./executor.ts";

// The compiled executor's budget: a client sending ever-new operations (each twice, so each would
// be compiled) gets at most the minute's compilations; the rest run on graphql-js, answer the
// same, and compile once the budget is back.

// type Query { echo(n: Int!): Int! }
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: "Query",
    fields: {
      echo: {
        type: new GraphQLNonNull(GraphQLInt),
        args: { n: { type: new GraphQLNonNull(GraphQLInt) } },
        resolve: (_source, args: { n: number }) => args.n,
      },
    },
  }),
});

async function serverWithClock(budget: number) {
  const clock = { now: 0 };
  const compiled = createCompiledExecutor(schema, { maxCompilationsPerMinute: budget, now: () => clock.now });
  const server = new ApolloServer({ gateway: compiled.gateway, plugins: [compiled.plugin] });
  await server.start();
  const ask = async (query: string) => {
    const response = await server.executeOperation({ query });
    if (response.body.kind !== "single") throw new Error("incremental answer");
    return response.body.singleResult;
  };
  return { clock, stats: compiled.stats, ask, stop: () => server.stop() };
}

/**
 * A compiled and a graphql-js Apollo Server over one schema, started: `ask` gives one's answer as
 * JSON text, for the property tests below to hold the two byte-equal.
 */
async function compiledBesideGraphqlJs<TContext extends BaseContext>(schema: GraphQLSchema, options: Parameters<typeof createCompiledExecutor>[1] = {}) {
  const compiled = createCompiledExecutor(schema, options);
  const plugins = [ApolloServerPluginInlineTraceDisabled()];
  const servers = {
    compiled: new ApolloServer<TContext>({ gateway: compiled.gateway, plugins: [...plugins, compiled.plugin] }),
    graphqlJs: new ApolloServer<TContext>({ schema, plugins }),
  };
  await Promise.all([servers.compiled.start(), servers.graphqlJs.start()]);
  const ask = async (which: keyof typeof servers, request: { query: string; variables?: Record<string, unknown> }, contextValue: TContext) => {
    const response = await servers[which].executeOperation(request, { contextValue });
    if (response.body.kind !== "single") throw new Error("incremental answer");
    return JSON.stringify(response.body.singleResult);
  };
  const stop = () => Promise.all([servers.compiled.stop(), servers.graphqlJs.stop()]);
  return { stats: compiled.stats, ask, stop };
}

describe("the compiled executor's compilation budget", () => {
  it("compiles at most the budget per minute; the rest answer the same on graphql-js and compile in a later minute", async () => {
    const t = await serverWithClock(3);
    try {
      // Ten distinct operations, each sent twice: ten second arrivals, three compiled.
      const operations = Array.from({ length: 10 }, (_, i) => `{ echo(n: ${i}) alias${i}: echo(n: ${i + 1}) }`);
      for (const [i, query] of operations.entries()) {
        for (let arrival = 0; arrival < 2; arrival++) {
          expect(await t.ask(query)).toEqual({ data: { echo: i, [`alias${i}`]: i + 1 } });
        }
      }
      expect(t.stats.compilations).toBe(3);
      expect(t.stats.compilationsDeferred).toBe(7);
      expect(t.stats.compiledRuns).toBe(3);
      // Within the same minute a deferred operation stays on graphql-js.
      const runsBefore = t.stats.compiledRuns;
      expect(await t.ask(operations[9]!)).toEqual({ data: { echo: 9, alias9: 10 } });
      expect(t.stats.compiledRuns).toBe(runsBefore);
      // A minute later it compiles, and then runs compiled.
      t.clock.now += 60_000;
      expect(await t.ask(operations[9]!)).toEqual({ data: { echo: 9, alias9: 10 } });
      expect(t.stats.compilations).toBe(4);
      expect(await t.ask(operations[9]!)).toEqual({ data: { echo: 9, alias9: 10 } });
      expect(t.stats.compiledRuns).toBe(runsBefore + 2);
    } finally {
      await t.stop();
    }
  });
});

// A run answers before Apollo Server's execution step: that step hands a gateway a
// request context whose accessors (`response.http.status`) are fresh closures over the request, and
// with them each answer survived the scavenges until the next full collection (issue 24: ~160 KB
// promoted per betResults(100) answer; kit/executor.ts says how it was found).
describe("the compiled executor's place in Apollo Server's pipeline", () => {
  it("answers runs without errors before Apollo Server's execution step (no gateway request context); runs with errors go through it", async () => {
    const compiled = createCompiledExecutor(schema);
    const executions: string[] = [];
    const spy = {
      async requestDidStart() {
        return {
          async executionDidStart({ operationName }: { operationName: string | null }) {
            executions.push(operationName ?? "");
          },
        };
      },
    };
    const server = new ApolloServer({ gateway: compiled.gateway, plugins: [spy, compiled.plugin] });
    await server.start();
    try {
      const ask = async (query: string, variables?: Record<string, unknown>) => {
        const response = await server.executeOperation({ query, ...(variables ? { variables } : {}) });
        if (response.body.kind !== "single") throw new Error("incremental answer");
        return response.body.singleResult;
      };
      const query = "query Echo($n: Int!) { echo(n: $n) }";
      for (const n of [1, 2, 3]) expect(await ask(query, { n })).toEqual({ data: { echo: n } });
      expect(compiled.stats).toMatchObject({ fallbackRuns: 1, compiledRuns: 2 });
      // First sight on graphql-js, then compiled: all three answered before the execution step.
      expect(executions).toEqual([]);
      // Variables the compiled query refuses: answered with graphql-js's errors, through the execution step.
      const refused = await ask(query, { n: "x" });
      expect(refused.errors?.[0]?.message).toMatch(/Int cannot represent/);
      expect(executions).toEqual(["Echo"]);
    } finally {
      await server.stop();
    }
  });
});

// Variables are coerced once, by the compiled query; graphql-js coerces them only when the
// compiled query refuses them (for its own error messages). Both must accept the same values and
// answer alike: generated variables of every input type the subgraphs take (their own scalars,
// enums, input objects, lists) through the history subgraph's SDL, compiled against graphql-js.
describe("the compiled executor's variable coercion", () => {
  const echoArguments =
    "u: UInt256, us: [UInt256!], c: ChainId, a: Address, h: Bytes32, s: [BetStatus!], o: OrderDirection, f: PlayerBetsFilter, g: BetsFilter, i: Int, x: Float, id: ID, t: String, b: Boolean";
  const echoSchema = (() => {
    const history = loadSdl(new URL("../history/history.graphql", import.meta.url));
    const echo = parse(`extend type Query { echo(${echoArguments}): String }`);
    const resolvers = {
      ...scalarResolvers,
      Query: { echo: (_source: unknown, args: Record<string, unknown>) => JSON.stringify(args) },
    };
    return buildFederatedSchema({ ...history, definitions: [...history.definitions, ...echo.definitions] }, resolvers);
  })();
  const required = new Set(["c"]);
  const declarations = echoArguments.split(", ").map((argument) => {
    const [name, type] = argument.split(": ") as [string, string];
    return { name, type: required.has(name) ? `${type}!` : type };
  });
  const query = `query (${declarations.map((d) => `$${d.name}: ${d.type}`).join(", ")}) { echo(${declarations.map((d) => `${d.name}: $${d.name}`).join(", ")}) }`;

  // Per variable: values of its type, and values a client might send instead.
  const validUint = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }).map(String);
  const uint = fc.oneof(validUint, fc.constantFrom("01", "-1", "", " 1", "1e3", "0x10", 2 ** 256), fc.integer(), fc.double());
  const validAddress = fc.oneof(
    fc.constantFrom("0x000000000000000000000000000000000000dEaD", "0x000000000000000000000000000000000000dead", "0x52908400098527886e0f7030069857d2e4169ee7"),
    fc.stringMatching(/^0x[0-9a-f]{40}$/),
  );
  const address = fc.oneof(
    validAddress,
    fc.constantFrom("0xdead", "0x52908400098527886E0F7030069857D2E4169EE7", "0x52908400098527886E0F7030069857d2e4169ee7"),
    fc.stringMatching(/^0x[0-9a-fA-F]{40}$/),
  );
  const validStatus = fc.constantFrom("PENDING", "SETTLED", "REFUNDED");
  const status = fc.oneof(validStatus, fc.constantFrom("pending", "LOST", 1));
  const anything = fc.jsonValue({ maxDepth: 2 });
  const validChainId = fc.constantFrom(1, 31337, 10, 8453, 2 ** 31 - 1);
  const chainId = fc.oneof(validChainId, fc.constantFrom(0, -5, 2 ** 31, 2 ** 53, 1.5, "1", null), fc.integer());
  const filterOf = (pick: <T>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>, extra: boolean) =>
    fc.record(
      {
        chainId: pick(validChainId, chainId),
        status: pick(fc.array(validStatus, { minLength: 1, maxLength: 3 }), fc.oneof(fc.array(status, { maxLength: 3 }), status, fc.constant(null))),
        game: pick(fc.string(), fc.oneof(fc.string(), fc.integer())),
        player: pick(validAddress, address),
        placedFrom: pick(validUint, uint),
        placedTo: pick(validUint, uint),
        ...(extra ? { unknownField: anything } : {}),
      },
      { requiredKeys: [] },
    );
  const validOnly = <T>(valid: fc.Arbitrary<T>) => valid;
  const either = <T>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<unknown>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: any });
  const arbitraries = (
    pick: <T>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>,
    extra: boolean,
  ): Record<string, fc.Arbitrary<unknown>> => ({
    u: pick(validUint, uint),
    us: pick(
      fc.oneof(fc.array(validUint, { maxLength: 4 }), validUint),
      fc.oneof(fc.array(uint, { maxLength: 4 }), fc.array(fc.oneof(uint, fc.constant(null)), { maxLength: 3 })),
    ),
    c: pick(validChainId, chainId),
    a: pick(validAddress, address),
    h: pick(fc.stringMatching(/^0x[0-9a-f]{64}$/), fc.constantFrom("0x", "0x12")),
    s: pick(fc.oneof(fc.array(validStatus, { maxLength: 3 }), validStatus), fc.oneof(fc.array(status, { maxLength: 3 }), status)),
    o: pick(fc.constantFrom("ASC", "DESC", null), fc.constantFrom("asc", 1)),
    f: pick(filterOf(pick, extra), fc.oneof(filterOf(either, true), anything)),
    g: pick(filterOf(pick, extra), fc.oneof(filterOf(either, true), anything)),
    i: pick(fc.integer(), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 1.5, "1", true)),
    x: pick(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom("1.5", true)),
    id: pick(fc.oneof(fc.string(), fc.integer()), fc.constantFrom(1.5, true)),
    t: pick(fc.string(), fc.oneof(fc.integer(), fc.constant(false))),
    b: pick(fc.boolean(), fc.constantFrom(0, "true")),
  });
  // Half the time every variable is of its type (the query runs), else some are not or are anything.
  const record = (fields: Record<string, fc.Arbitrary<unknown>>) => fc.record(fields, { requiredKeys: [] });
  const variables = fc.oneof(
    record(arbitraries(validOnly, false)),
    record(arbitraries(either, true)),
    record(Object.fromEntries(Object.keys(arbitraries(validOnly, false)).map((name) => [name, anything]))),
  );

  it("accepts and refuses the same variables as graphql-js, with the same answers", async () => {
    const t = await compiledBesideGraphqlJs(echoSchema);
    try {
      const ask = (which: "compiled" | "graphqlJs", vars: Record<string, unknown>) => t.ask(which, { query, variables: vars }, {});
      // Twice: the first arrival runs on graphql-js, every later one compiled.
      for (let arrival = 0; arrival < 2; arrival++) await ask("compiled", { c: 1 });
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(variables, async (vars) => {
          const [fromCompiled, fromGraphqlJs] = await Promise.all([ask("compiled", vars), ask("graphqlJs", vars)]);
          expect(fromCompiled).toBe(fromGraphqlJs);
          if (fromGraphqlJs.startsWith('{"data"')) accepted++;
        }),
        // An array given for an input object: graphql-jit alone took it for an empty object (CI seed -1484078912).
        { numRuns: 1000, examples: [[{ c: 1, f: [] }], [{ c: 1, g: [[]] }]] },
      );
      // Both sides of the rule were tried: values accepted (run compiled) and values refused.
      expect(accepted).toBeGreaterThan(20);
      expect(t.stats.fallbackRuns).toBeGreaterThan(20);
      expect(t.stats.compiledRuns).toBeGreaterThanOrEqual(accepted);
    } finally {
      await t.stop();
    }
  });
});

// A non-null list of non-null leaves is compiled as one leaf over the whole array (no per-item
// handler); an array that does not fit its type is answered by graphql-js. Generated resolver
// values, valid and not, for every kind of leaf list: compiled and graphql-js answer alike.
describe("the compiled executor's leaf lists", () => {
  // UInt256 as served, counting the values it is asked to serialize.
  const uint256Serialized = { count: 0 };
  const countedUInt256 = new GraphQLScalarType({
    ...scalarResolvers.UInt256.toConfig(),
    serialize: (value) => {
      uint256Serialized.count++;
      return scalarResolvers.UInt256.serialize(value);
    },
  });
  const leafListSchema = (() => {
    const sdl = parse(`
      scalar UInt256
      enum Color { RED GREEN }
      type Query { thing: Thing! things: [Thing] }
      type Thing {
        ints: [Int!]!
        ids: [ID!]!
        strings: [String!]!
        flags: [Boolean!]!
        colors: [Color!]!
        numbers: [UInt256!]!
        pairs: [[UInt256!]!]!
        maybe: [Int!]
        loose: [Int]!
        computed: [Int!]!
      }
    `);
    const values = (context: { thing: Record<string, unknown> }) => context.thing;
    return buildFederatedSchema(sdl, {
      ...scalarResolvers,
      UInt256: countedUInt256,
      Color: { RED: "r", GREEN: "g" },
      Query: {
        thing: (_s: unknown, _a: unknown, context: { thing: Record<string, unknown> }) => values(context),
        things: (_s: unknown, _a: unknown, context: { thing: Record<string, unknown> }) => [values(context), null, values(context)],
      },
      Thing: { computed: (thing: Record<string, unknown>) => thing.ints },
    });
  })();
  const query = "{ thing { ints ids strings flags colors numbers pairs maybe loose computed } things { numbers pairs ints } }";

  // Every field of its type, then at most one field (never the nullable or loose lists, which are
  // completed item by item as before) given anything a resolver might return instead: items of
  // another type, null items, a Set, a string, an object. A null field itself is graphql-jit's own
  // non-null error, as before.
  const uint = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }).map(String);
  const valid = {
    ints: fc.array(fc.integer(), { maxLength: 5 }),
    ids: fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 5 }),
    strings: fc.array(fc.string(), { maxLength: 5 }),
    flags: fc.array(fc.boolean(), { maxLength: 5 }),
    colors: fc.array(fc.constantFrom("r", "g"), { maxLength: 5 }),
    numbers: fc.array(fc.oneof(uint, fc.bigInt({ min: 0n, max: 10n ** 30n })), { maxLength: 5 }),
    pairs: fc.array(fc.array(uint, { maxLength: 3 }), { maxLength: 3 }),
    maybe: fc.oneof(fc.array(fc.integer(), { maxLength: 3 }), fc.constant(null)),
    loose: fc.array(fc.oneof(fc.integer(), fc.constant(null)), { maxLength: 3 }),
  };
  const junk = fc.oneof(
    fc.constant(null),
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant({}),
    fc.constantFrom("01", "-1", "RED", "b", 2 ** 31, 1.5),
  );
  const bad = fc.oneof(
    fc.array(fc.oneof(junk, uint, fc.integer()), { minLength: 1, maxLength: 4 }),
    fc.array(fc.array(fc.oneof(junk, uint), { maxLength: 3 }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.oneof(fc.integer(), uint), { maxLength: 3 }).map((items) => new Set(items)),
    fc.oneof(fc.string(), fc.integer(), fc.constant({})),
  );
  const shadowed = ["ints", "ids", "strings", "flags", "colors", "numbers", "pairs"] as const;
  const thing = fc.tuple(fc.record(valid), fc.option(fc.tuple(fc.constantFrom(...shadowed), bad), { nil: undefined }));

  it("answers generated lists, valid and not, as graphql-js does; the schema is left as it was", async () => {
    const before = printSchema(leafListSchema);
    const t = await compiledBesideGraphqlJs<{ thing: Record<string, unknown> }>(leafListSchema);
    try {
      const ask = (which: "compiled" | "graphqlJs", value: Record<string, unknown>) => t.ask(which, { query }, { thing: value });
      for (let arrival = 0; arrival < 2; arrival++)
        await ask("compiled", { ints: [], ids: [], strings: [], flags: [], colors: [], numbers: [], pairs: [], loose: [] });
      let spoiled = 0;
      await fc.assert(
        fc.asyncProperty(thing, async ([value, spoil]) => {
          const given = spoil ? { ...value, [spoil[0]]: spoil[1] } : value;
          const runs = t.stats.compiledRuns;
          const [fromCompiled, fromGraphqlJs] = await Promise.all([ask("compiled", given), ask("graphqlJs", given)]);
          expect(fromCompiled).toBe(fromGraphqlJs);
          // Lists of their type are answered by the compiled query, not handed to graphql-js.
          if (!spoil) expect(t.stats.compiledRuns).toBe(runs + 1);
          else spoiled++;
        }),
        { numRuns: 500 },
      );
      // Lists that did not fit were tried, and graphql-js answered them.
      expect(spoiled).toBeGreaterThan(100);
      expect(t.stats.fallbackRuns).toBeGreaterThan(50);
      expect(printSchema(leafListSchema)).toBe(before);
    } finally {
      await t.stop();
    }
  });

  // Lists the database has checked (kit/bet-result.ts STORE_CHECKED_LISTS) hold canonical decimals
  // of any length, some above 2^256-1 (the CHECK does not bound them): served as read up to 77 digits,
  // through UInt256 otherwise, and anything but strings in them still answers as graphql-js. (A
  // string that is not a canonical decimal is served as read: the database refuses to keep one,
  // prisma/proof-numbers.db.test.ts.)
  it("serves store-checked UInt256 lists as read, and answers every other value as graphql-js does", async () => {
    const storeCheckedLists = new Set(["Thing.numbers", "Thing.pairs"]);
    const t = await compiledBesideGraphqlJs<{ thing: Record<string, unknown> }>(leafListSchema, { storeCheckedLists });
    try {
      const ask = (which: "compiled" | "graphqlJs", value: Record<string, unknown>) => t.ask(which, { query }, { thing: value });
      const empty = { ints: [], ids: [], strings: [], flags: [], colors: [], numbers: [], pairs: [], loose: [] };
      for (let arrival = 0; arrival < 2; arrival++) await ask("compiled", empty);

      const stored = fc.oneof(uint, fc.bigInt({ min: 0n, max: 10n ** 80n }).map(String));
      const notString = fc.oneof(fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.constant({}), fc.constantFrom(2 ** 31, 1.5));
      const notStored = fc.oneof(
        fc.array(fc.oneof(notString, stored, fc.array(stored, { maxLength: 2 })), { minLength: 1, maxLength: 4 }),
        fc.array(fc.array(fc.oneof(notString, stored), { maxLength: 3 }), { minLength: 1, maxLength: 3 }),
        fc.array(stored, { maxLength: 3 }).map((items) => new Set(items)),
        fc.oneof(fc.string(), fc.integer(), fc.constant({})),
      );
      const served = fc.record({ numbers: fc.array(stored, { maxLength: 5 }), pairs: fc.array(fc.array(stored, { maxLength: 3 }), { maxLength: 3 }) });
      let overBound = 0;
      await fc.assert(
        fc.asyncProperty(served, fc.option(fc.tuple(fc.constantFrom("numbers", "pairs"), notStored), { nil: undefined }), async (lists, spoil) => {
          const given = { ...empty, ...lists, ...(spoil ? { [spoil[0]]: spoil[1] } : {}) };
          const [fromCompiled, fromGraphqlJs] = await Promise.all([ask("compiled", given), ask("graphqlJs", given)]);
          expect(fromCompiled).toBe(fromGraphqlJs);
          if ([...lists.numbers, ...lists.pairs.flat()].some((n) => BigInt(n) > (1n << 256n) - 1n)) overBound++;
        }),
        { numRuns: 300 },
      );
      expect(overBound).toBeGreaterThan(10);

      // The compiled query does not ask UInt256 about numbers of 77 digits or fewer in those lists.
      const numbers = ["0", "7", "1".repeat(77)];
      const pairs = [["12", "34"], []];
      const before = uint256Serialized.count;
      const answer = JSON.parse(await ask("compiled", { ...empty, numbers, pairs })) as { data: { thing: { numbers: string[]; pairs: string[][] } } };
      expect(answer.data.thing).toMatchObject({ numbers, pairs });
      expect(uint256Serialized.count - before).toBe(0);
      // A number of 78 digits is (it may be above 2^256-1), and so is each number of a list it is in:
      // 4 numbers, answered three times (`thing`, and `things` twice).
      await ask("compiled", { ...empty, numbers: [...numbers, "1".repeat(78)], pairs });
      expect(uint256Serialized.count - before).toBe(3 * 4);
    } finally {
      await t.stop();
    }
  });

  it("refuses to serve a list as store-checked unless it is a list of UInt256", () => {
    expect(() => createCompiledExecutor(leafListSchema, { storeCheckedLists: new Set(["Thing.ints"]) })).toThrow(/Thing.ints is not a list of UInt256/);
  });
});
