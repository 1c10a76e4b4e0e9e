import { describe, expect, it } from "vitest";
import { ApolloServer, type ApolloServerPlugin, type BaseContext } from "@apollo/server";
import { ApolloServerPluginCacheControl } from "@apollo/server/plugin/cacheControl";
import { buildSchema, GraphQLError, type ExecutionResult } from "graphql";
import type { ExecutorSeam, SeamRequestContext } from "../core/schema.ts";
import { executeEarly } from "./early-execution.ts";

// The gateway runs operations before Apollo Server's execution step, whose gateway request context
// kept each answer alive through the scavenges (gateway/early-execution.ts; issue 24: ~174 KB → 1.5 KB
// promoted per betResults(100) answer under `npm start`). What must hold: an answer without errors
// never enters that step, and the executor gets the request's own cache policy (subgraphs' Cache-Control
// restricts it); an answer with errors, or a throw, goes through the step once, not run twice.

const schema = buildSchema("type Query { answer: Int, broken: Int, thrown: Int }");

/** A seam like ApolloGateway's: answers `answer`, errs on `broken`, throws on `thrown`, and restricts the cache policy as a subgraph's Cache-Control would. */
function fakeFederation() {
  const seen: SeamRequestContext[] = [];
  const seam: ExecutorSeam = {
    async load() {
      return {
        executor: async (context: SeamRequestContext): Promise<ExecutionResult> => {
          seen.push(context);
          context.overallCachePolicy.restrict({ maxAge: 30, scope: "PUBLIC" });
          const field = context.operation.selectionSet.selections[0];
          const name = field?.kind === "Field" ? field.name.value : "";
          if (name === "thrown") throw new Error("the plan failed");
          if (name === "broken") return { data: { broken: null }, errors: [new GraphQLError("the subgraph failed")] };
          return { data: { answer: 42 } };
        },
      };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: "" });
      return () => {};
    },
    async stop() {},
  };
  return { seam, seen };
}

describe("the gateway's execution before Apollo Server's execution step", () => {
  it("answers without the execution step, with the request's cache policy; errors and throws go through it once", async () => {
    const { seam, seen } = fakeFederation();
    const early = executeEarly(seam);
    const executions: string[] = [];
    const spy: ApolloServerPlugin<BaseContext> = {
      async requestDidStart() {
        return {
          async executionDidStart({ operationName }) {
            executions.push(operationName ?? "");
          },
        };
      },
    };
    const server = new ApolloServer({ gateway: early.gateway, plugins: [ApolloServerPluginCacheControl(), spy, early.plugin] });
    await server.start();
    try {
      const answer = await server.executeOperation({ query: "query Answer { answer }" });
      expect(answer.body).toEqual({ kind: "single", singleResult: { data: { answer: 42 } } });
      expect(answer.http.headers.get("cache-control")).toBe("max-age=30, public");
      expect(executions).toEqual([]);
      expect(seen).toHaveLength(1);
      // The context the federation executor gets: the request's own, with no response accessors.
      expect(seen[0]).toMatchObject({ source: "query Answer { answer }", operationName: "Answer", debug: false });
      expect(seen[0]!.response).toBeUndefined();
      expect(seen[0]!.queryHash).toMatch(/^[0-9a-f]{64}$/);

      const broken = await server.executeOperation({ query: "query Broken { broken }" });
      expect(broken.body.kind === "single" && broken.body.singleResult).toMatchObject({
        data: { broken: null },
        errors: [{ message: "the subgraph failed" }],
      });
      expect(executions).toEqual(["Broken"]);
      expect(seen).toHaveLength(2); // handed on to the execution step, not run again

      const thrown = await server.executeOperation({ query: "query Thrown { thrown }" });
      expect(thrown.body.kind === "single" && thrown.body.singleResult.errors?.[0]?.message).toBe("the plan failed");
      expect(executions).toEqual(["Broken", "Thrown"]);
      expect(seen).toHaveLength(3);

      // Runs handed on are keyed by the operation's context value, which Apollo Server clones per
      // operation: two failing operations given one context value at once each get their own answer.
      const shared = {};
      const [first, second] = await Promise.all([
        server.executeOperation({ query: "query Broken { broken }" }, { contextValue: shared }),
        server.executeOperation({ query: "query Thrown { thrown }" }, { contextValue: shared }),
      ]);
      expect(first.body.kind === "single" && first.body.singleResult.errors?.[0]?.message).toBe("the subgraph failed");
      expect(second.body.kind === "single" && second.body.singleResult.errors?.[0]?.message).toBe("the plan failed");
      expect(seen).toHaveLength(5);
    } finally {
      await server.stop();
    }
  });
});
