import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLRequestContextResponseForOperation } from "@apollo/server";
import type { ExecutionResult } from "graphql";
import type { SeamExecutor } from "./schema.ts";

// Apollo Server's execution step, for an executor given through its `gateway` seam, makes a
// gateway request context whose `response.http.status` getter and setter are fresh closures over
// the request; with them every answer outlived the scavenges until a full collection (issue 24:
// ~160 KB promoted per betResults(100) answer in a subgraph, ~170 KB in the gateway; in a copy of
// Apollo Server, a plain `status` field there instead of the two accessors removed it — what in V8
// holds the closures was not pinned down). Both the subgraphs (subgraphs/kit/executor.ts) and the
// gateway (gateway/early-execution.ts) therefore run each operation in the last plugin's
// `responseForOperation`, after every plugin's didResolveOperation, and an answer without errors is
// Apollo Server's response as it stands: the execution step is skipped. An answer with errors, or a
// throw, goes through the execution step as before — the seam's executor hands that run on instead
// of running again — so that didEncounterErrors, error formatting and status rules see it. Plugins'
// executionDidStart hooks then see only those.

/** What the plugin gets of a request: its operation is resolved. */
export type ResolvedRequest = GraphQLRequestContextResponseForOperation<BaseContext>;

export interface EarlyAnswer {
  /** Apollo Server's plugin that runs each operation before the execution step: the server's plugins list it last. */
  plugin: ApolloServerPlugin<BaseContext>;
  /** The seam's executor around `otherwise`: what the plugin ran and did not answer is handed on as it was, the rest runs. */
  executor(otherwise: SeamExecutor): SeamExecutor;
}

/** `run` answers a request, or says `undefined` to leave it to the execution step (e.g. before anything is loaded). */
export function answerBeforeExecutionStep(run: (request: ResolvedRequest) => Promise<ExecutionResult> | undefined): EarlyAnswer {
  // Runs the plugin made and did not answer (errors, or a throw), by the operation's context value:
  // Apollo Server clones it for each operation (those of one batch too), and the execution step hands
  // the executor that very clone.
  const ranBefore = new WeakMap<object, Promise<ExecutionResult>>();
  const plugin: ApolloServerPlugin<BaseContext> = {
    async requestDidStart() {
      return {
        async responseForOperation(request) {
          const ran = run(request);
          if (!ran) return null;
          const result = await ran.catch(() => undefined); // a throw is the execution step's
          if (!result || result.errors?.length || result.data === undefined) {
            ranBefore.set(request.contextValue, ran);
            return null;
          }
          return { http: { headers: new HeaderMap() }, body: { kind: "single", singleResult: result } };
        },
      };
    },
  };
  return {
    plugin,
    executor: (otherwise) => async (requestContext) => {
      const ran = ranBefore.get(requestContext.context);
      if (!ran) return otherwise(requestContext);
      ranBefore.delete(requestContext.context);
      return ran;
    },
  };
}
