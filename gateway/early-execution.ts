import type { ApolloServerPlugin, BaseContext } from "@apollo/server";
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import type { Logger } from "@apollo/utils.logger";
import { answerBeforeExecutionStep, type ResolvedRequest } from "../core/early-answer.ts";
import type { ExecutorSeam, SeamExecutor, SeamRequestContext } from "../core/schema.ts";

// The gateway runs each operation before Apollo Server's execution step, as the subgraphs do
// (core/early-answer.ts says why: ~170 KB promoted per betResults(100) answer under `npm start`).
// The federation executor gets the request context that step would have made, without the
// `response` whose status accessors kept answers alive: no data source of this gateway reads the
// incoming response (subgraph-source.ts reads only the cache policy, which is the request's own).

export interface EarlyExecution {
  /** The seam Apollo Server is given in place of `seam`. */
  gateway: ExecutorSeam;
  /** Runs operations before the execution step: the server's plugins list it last. */
  plugin: ApolloServerPlugin<BaseContext>;
}

export function executeEarly(seam: ExecutorSeam): EarlyExecution {
  let executor: SeamExecutor | undefined;
  let server: { logger: Logger; cache: KeyValueCache<string> } | undefined;

  const contextOf = (request: ResolvedRequest, queryHash: string, logger: Logger, cache: KeyValueCache<string>): SeamRequestContext => ({
    request: {
      query: request.request.query,
      operationName: request.request.operationName,
      variables: request.request.variables,
      extensions: request.request.extensions,
    },
    logger,
    schema: request.schema,
    schemaHash: "schemaHash no longer exists since Apollo Server 4" as SeamRequestContext["schemaHash"],
    context: request.contextValue,
    cache,
    queryHash,
    document: request.document,
    source: request.source,
    operationName: request.operationName,
    operation: request.operation,
    errors: request.errors,
    metrics: request.metrics,
    debug: false,
    overallCachePolicy: request.overallCachePolicy,
    requestIsBatched: request.requestIsBatched,
  });

  // Nothing loaded yet, or no query hash (Apollo Server sets it before any plugin runs): the execution step's.
  const early = answerBeforeExecutionStep((request) =>
    executor && server && request.queryHash !== undefined ? executor(contextOf(request, request.queryHash, server.logger, server.cache)) : undefined,
  );
  return {
    gateway: {
      onSchemaLoadOrUpdate: (callback) => seam.onSchemaLoadOrUpdate(callback),
      stop: () => seam.stop(),
      async load(options) {
        const loaded = await seam.load(options);
        executor = loaded.executor ?? undefined;
        return { executor: executor ? early.executor(executor) : null };
      },
    },
    plugin: {
      ...early.plugin,
      async serverWillStart({ logger, cache }) {
        server = { logger, cache };
      },
    },
  };
}
