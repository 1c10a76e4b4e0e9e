import type { IncomingMessage } from "node:http";
import { ApolloServer, HeaderMap, type ApolloServerPlugin, type BaseContext } from "@apollo/server";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import type { DocumentNode } from "graphql";
import type { Registry } from "prom-client";
import { createErrorFormatter } from "../../core/errors.ts";
import { createGraphQLRequestListener, listen, stringifyAnswer, type RunningHttpServer } from "../../core/http.ts";
import type { Logger } from "../../core/logger.ts";
import type { Database } from "../../core/db.ts";
import { databaseCheck, probeRoutes, reasonOf } from "../../core/probes.ts";
import { MAX_AGE } from "../../core/max-age.ts";
import { clientAddressOf, READ_PINS_HONOURED_HEADER, readPinOf } from "../../core/request-scope.ts";
import { createServiceMetrics } from "../../core/metrics.ts";
import { buildFederatedSchema, loadSdl, type InProcessAnswer, type InProcessRequest } from "../../core/schema.ts";
import { cacheHeaderPlugin, instrumentCacheHints, withCachePolicy } from "./cache-hints.ts";
import type { SubgraphDeps } from "./deps.ts";
import { STORE_CHECKED_LISTS } from "./bet-result.ts";
import { createCompiledExecutor, type ExecutorStats } from "./executor.ts";
import { registerLaneMetrics } from "./lane-metrics.ts";
import { type ReadAt, readAtPlugin } from "./read-at.ts";

export interface SubgraphOptions<TContext extends BaseContext> {
  name: string;
  typeDefs: DocumentNode;
  /** The codegen-typed resolver map of the subgraph (`Resolvers` from its generated types). */
  resolvers: object;
  /** Builds a fresh context (with its request-scoped DataLoaders) for every request. */
  context: (req: Pick<IncomingMessage, "headers">) => TContext;
  logger: Logger;
  production: boolean;
  maxBodyBytes?: number;
  /** Whether it reads by read pin (it has replicas): said on every answer (READ_PINS_HONOURED_HEADER). */
  honoursReadPins?: boolean;
  /** Fields ("Type.field") whose value never changes once it exists: never hinted nor wrapped (kit/cache-hints.ts). */
  finalFields?: readonly string[];
  /**
   * How operations run: compiled once per operation (kit/executor.ts, the default), or by graphql-js
   * field by field, as Apollo Server does on its own (what the compiled path is checked against).
   */
  execution?: "compiled" | "graphql-js";
  /** Its database (the primary): GET /readyz is 503 while it does not answer; without it /readyz checks nothing but that it listens. */
  db?: Database;
  /** Adds metrics of this process to the subgraph's /metrics (e.g. kit/lane-metrics.ts). */
  registerMetrics?: (registry: Registry) => void;
  /** Plugins of this subgraph's requests beyond the shared ones (kit/read-at.ts). */
  plugins?: ApolloServerPlugin<TContext>[];
}

/** What a composition root needs of a subgraph: its name, and to run it. */
export interface RunnableSubgraph {
  name: string;
  /** How its requests were executed (compiled or graphql-js); absent when `execution` is graphql-js. */
  executorStats?: ExecutorStats;
  listen(host: string, port: number): Promise<RunningHttpServer>;
  /**
   * Runs one operation through the same request pipeline as its HTTP route (context, plugins,
   * error masking, Cache-Control), for a gateway in the same process. Answers 503 unless
   * listening, 500 when its context cannot be made (as its HTTP front would).
   */
  execute(request: InProcessRequest): Promise<InProcessAnswer>;
  /** Whether it reads by read pin (it has replicas), as it tells a gateway on every answer. */
  readonly honoursReadPins: boolean;
  stop(): Promise<void>;
}

export interface Subgraph<TContext extends BaseContext> extends RunnableSubgraph {
  server: ApolloServer<TContext>;
}

/** Tells the gateway that this subgraph reads by pin, so that it never merges calls of different pins. */
const readPinsHonouredPlugin: ApolloServerPlugin<BaseContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        response.http.headers.set(READ_PINS_HONOURED_HEADER, "1");
      },
    };
  },
};

/** Builds a subgraph from its dependencies (what subgraphs/registry.ts lists), named as it is built. */
export type SubgraphFactory = ((deps: SubgraphDeps) => RunnableSubgraph) & { subgraphName: string };

/** One way to build every subgraph: Federation schema, shared error masking, shared HTTP front. */
export function createSubgraph<TContext extends BaseContext>(options: SubgraphOptions<TContext>): Subgraph<TContext> {
  const logger = options.logger.child({ subgraph: options.name });
  const metrics = createServiceMetrics(`subgraph-${options.name}`, { defaultMetrics: false });
  options.registerMetrics?.(metrics.registry);
  const schema = instrumentCacheHints(buildFederatedSchema(options.typeDefs, options.resolvers), MAX_AGE.live, options.finalFields);
  const compiled = options.execution === "graphql-js" ? undefined : createCompiledExecutor(schema, { storeCheckedLists: STORE_CHECKED_LISTS });
  const server = new ApolloServer<TContext>({
    // Shutdown belongs to the process's composition root (bin/wiring.ts stopOnSignals). Apollo's own
    // SIGTERM/SIGINT handlers stop this server and re-raise the signal, killing the process before
    // the rest of its shutdown (bin/start-shutdown.test.ts).
    stopOnTerminationSignals: false,
    ...(compiled ? { gateway: compiled.gateway } : { schema }),
    formatError: createErrorFormatter({ production: options.production, logger }),
    includeStacktraceInErrorResponses: false,
    // Answers are written as bytes kept when rendered (core/http.ts stringifyAnswer), not as strings.
    stringifyResult: stringifyAnswer,
    // Introspection answers in every mode, as at the gateway (Apollo turns it off under NODE_ENV=production).
    introspection: true,
    // No Apollo usage reporting here: federated traces would only cost time per request.
    // Fields without a hint may change with the next block (core/max-age.ts). Cache hints are
    // gathered by kit/cache-hints.ts, not by Apollo's per-field plugin (turned off here).
    plugins: [
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      cacheHeaderPlugin(),
      metrics.plugin,
      ...(options.honoursReadPins ? [readPinsHonouredPlugin] : []),
      ...(options.plugins ?? []),
      // Last: it answers before Apollo Server's execution step (kit/executor.ts says why).
      ...(compiled ? [compiled.plugin] : []),
    ],
    logger,
  });
  let http: RunningHttpServer | undefined;
  let started: Promise<void> | undefined;
  // Served only between listen() and stop(), as over HTTP: a stopped subgraph answers nobody.
  let serving = false;
  // GET /livez, /readyz (core/probes.ts): ready while its database answers and it is not stopping.
  // Read replicas are not checked: a subgraph whose replica is away reads from the primary.
  const probes = probeRoutes(async () => {
    const checks = options.db ? [await databaseCheck(options.db)] : [];
    const reasons = checks.filter((check) => check.status !== "OK").map(reasonOf);
    if (!serving) reasons.push(`${options.name}: shutting down`);
    return { checks, reasons };
  }, options.db);
  return {
    name: options.name,
    server,
    honoursReadPins: options.honoursReadPins ?? false,
    async execute({ headers, ...request }) {
      if (!serving) return { status: 503, body: {} };
      const httpHeaders = new HeaderMap(Object.entries(headers));
      let contextValue: TContext;
      try {
        contextValue = withCachePolicy(options.context({ headers }));
      } catch (error) {
        // As over HTTP, where Apollo Server answers a failing context with a 500.
        logger.error({ err: error }, "context creation failed");
        return { status: 500, body: {} };
      }
      const response = await server.executeOperation(
        { ...request, http: { method: "POST", headers: httpHeaders, search: "", body: request } },
        { contextValue },
      );
      if (response.body.kind !== "single") throw new Error(`The ${options.name} subgraph answered incrementally`);
      return {
        status: response.http.status ?? 200,
        body: response.body.singleResult as Record<string, unknown>,
        cacheControl: response.http.headers.get("cache-control"),
      };
    },
    ...(compiled ? { executorStats: compiled.stats } : {}),
    async listen(host, port) {
      started ??= server.start();
      await started;
      const listener = createGraphQLRequestListener<TContext>({
        server,
        maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
        context: async (req: IncomingMessage) => withCachePolicy(options.context(req)),
        routes: { "/metrics": metrics.route, ...probes },
      });
      // The default write deadline: a subgraph's reader is a gateway, which reads (core/write-deadline.ts).
      http = await listen(listener, host, port, { registry: metrics.registry });
      serving = true;
      logger.info({ url: `${http.url}/graphql` }, "subgraph listening");
      return http;
    },
    async stop() {
      serving = false;
      await http?.close();
      await server.stop();
    },
  };
}

type ScopedDeps = SubgraphDeps & { readAt: ReadAt };
const REQUEST_DEPS = Symbol("the deps of the request this context serves");

/** A subgraph's whole definition: its SDL file, its resolvers and how a request's context is made. */
export function defineSubgraph<TContext extends BaseContext>(definition: {
  name: string;
  sdl: URL;
  resolvers: object;
  createContext: (deps: SubgraphDeps) => TContext;
  /** Fields ("Type.field") whose value never changes once it exists (kit/cache-hints.ts). */
  finalFields?: readonly string[];
  /** Whether it runs statements in the expensive lane: its /metrics then shows the lane and the pool. */
  usesExpensiveLane?: boolean;
}) {
  const typeDefs = loadSdl(definition.sdl);
  return Object.assign(
    (deps: SubgraphDeps) => {
      const contextOver = (scoped: ScopedDeps): TContext => Object.assign(definition.createContext(scoped), { [REQUEST_DEPS]: scoped });
      /** The request's own deps (its database, read pin, ReadAt) on its context: a property, since Apollo copies the context of executeOperation. */
      const depsOf = (context: TContext): ScopedDeps => {
        const scoped = (context as TContext & { [REQUEST_DEPS]?: ScopedDeps })[REQUEST_DEPS];
        if (!scoped) throw new Error(`The ${definition.name} subgraph's context was not made by defineSubgraph`);
        return scoped;
      };
      return createSubgraph<TContext>({
        name: definition.name,
        typeDefs,
        resolvers: definition.resolvers,
        // Each request reads from one server, picked when its context is made (and settled before
        // its resolvers run, kit/read-at.ts); the calls of one gateway request carry one read pin,
        // and read from one server (core/read-replicas.ts).
        context: (req) => {
          const clientAddress = clientAddressOf(req);
          const readAt: ReadAt = { cursors: undefined };
          if (!deps.reads) return contextOver({ ...deps, clientAddress, readAt });
          const readPin = readPinOf(req);
          return contextOver({ ...deps, clientAddress, readAt, db: deps.reads.pick(readPin), ...(readPin ? { readPin } : {}) });
        },
        plugins: [
          readAtPlugin<TContext>({
            primary: deps.db,
            reads: deps.reads,
            depsOf,
            rebuild: (context, db) => {
              Object.assign(context, contextOver({ ...depsOf(context), db }));
            },
            ...(deps.headsTtlMs !== undefined ? { headsTtlMs: deps.headsTtlMs } : {}),
          }),
        ],
        logger: deps.logger,
        db: deps.db,
        production: deps.production,
        execution: deps.execution,
        honoursReadPins: deps.reads !== undefined,
        ...(definition.finalFields ? { finalFields: definition.finalFields } : {}),
        ...(definition.usesExpensiveLane ? { registerMetrics: (registry: Registry) => registerLaneMetrics(registry, deps.expensiveLane, deps.db) } : {}),
      });
    },
    { typeDefs, subgraphName: definition.name },
  );
}
