import { ApolloServer } from "@apollo/server";
import { GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLSchema } from "graphql";
import { describe, expect, it } from "vitest";
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
  const server = new ApolloServer({ gateway: compiled.gateway });
  await server.start();
  const ask = async (query: string) => {
    const response = await server.executeOperation({ query });
    if (response.body.kind !== "single") throw new Error("incremental answer");
    return response.body.singleResult;
  };
  return { clock, stats: compiled.stats, ask, stop: () => server.stop() };
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
