import type { IncomingMessage, ServerResponse } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginCacheControl } from "@apollo/server/plugin/cacheControl";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { ApolloGateway, LocalGraphQLDataSource, type GraphQLDataSource } from "@apollo/gateway";
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import type { Database } from "../core/db.ts";
import { Histogram } from "prom-client";
import { printSchema } from "graphql";
import type { CompressionSettings } from "../core/compression.ts";
import { createErrorFormatter } from "../core/errors.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { createServiceMetrics } from "../core/metrics.ts";
import { cachePolicyPlugin } from "./cache-policy.ts";
import { createGraphQLRequestListener, listen, sendJson, type RouteHandler, type RunningHttpServer } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createCsvExportRoute, CSV_PATH, type WalletBetPages } from "./csv-export.ts";
import { createHealthSchema } from "./health/schema.ts";
import { createHealthMonitor, type HealthMonitor } from "./health/report.ts";
import { followSupergraphPrices } from "./cost-directives.ts";
import { gatewayReadiness } from "./health/readiness.ts";
import { probeRoutes } from "../core/probes.ts";
import { DEFAULT_QUERY_LIMITS, queryLimitsPlugin, type QueryLimits } from "./limits.ts";
import { LeafLiteralShapes } from "./literal-shapes.ts";
import { QueriesOnly } from "./operation-types.ts";
import { MAX_DOCUMENT_TOKENS } from "./validation-work.ts";
import { createDocumentStore } from "./document-store.ts";
import { clientAddress } from "../core/client-address.ts";
import { readAtPlugin } from "./read-at.ts";
import { createInFlightCap, type InFlightSettings } from "./in-flight.ts";
import { createPointsBudget, withoutCostExtension, type PointsBudgetSettings } from "./points-budget.ts";
import { createResponseCache, type ResponseCacheBounds, type ResponseCacheStore, watchDataGeneration } from "./response-cache.ts";
import { createSingleSubgraphRouting } from "./single-subgraph.ts";
import { dedupeRepresentations } from "./entity-dedupe.ts";
import { executeEarly } from "./early-execution.ts";
import { stringifyResult } from "./forwarded-data.ts";
import { createSubgraphAgent, InProcessSubgraphSource, SubgraphDataSource, type InProcessSubgraph } from "./subgraph-source.ts";
import type { UsageRecorder } from "./schema-usage.ts";
import { createSupergraphSource, keyedBySchema, type SupergraphRegistrySettings } from "./supergraph-source.ts";

export const HEALTH_SUBGRAPH = "health";

export interface GatewayDeps {
  db: Database;
  logger: Logger;
  production: boolean;
  version: string;
  supergraphPath: string;
  /** A schema registry to follow instead of the file (gateway/supergraph-source.ts); the file when absent. */
  supergraphRegistry?: SupergraphRegistrySettings;
  /** Records which schema coordinates each operation uses (gateway/schema-usage.ts); off when absent. Flushed by stop(). */
  schemaUsage?: UsageRecorder;
  /** Subgraphs this gateway routes to (the registry's, from the composition root): a supergraph without one is refused. */
  routedSubgraphs?: readonly string[];
  /** Routing URLs by subgraph name that replace the supergraph's own (per environment). */
  subgraphUrls?: Record<string, string>;
  /** Every operation through the query plan, even one a single subgraph answers whole (gateway/single-subgraph.ts); for comparisons. */
  planEveryOperation?: boolean;
  /** Subgraphs served by this very process (the `npm start` stack), by name: called directly, not over HTTP. */
  inProcessSubgraphs?: Record<string, InProcessSubgraph>;
  redis?: { ping(): Promise<unknown> };
  maxBodyBytes: number;
  /** A client that stops reading an answer is cut off after this long without progress (core/write-deadline.ts); default 30 s. */
  writeDeadlineMs?: number;
  /** Compression of answers (core/compression.ts); off when absent. */
  compression?: CompressionSettings;
  health: { maxLagBlocks: number; maxStalenessSeconds: number };
  limits?: QueryLimits;
  /** Proxies whose X-Forwarded-For entries name the client (TRUST_PROXY_HOPS): the address forwarded to subgraphs; default the rate limit's, else 0. */
  trustProxyHops?: number;
  /** Each client's budget of cost points (gateway/points-budget.ts); off when absent (answers still say their cost). */
  rateLimit?: PointsBudgetSettings;
  /** Each client's cap on requests open in this process, checked first at the door (gateway/in-flight.ts); off when absent. */
  inFlight?: InFlightSettings;
  /** The automatic persisted queries' store shared by the gateways (gateway/persisted-queries.ts); absent: this process's own. */
  persistedQueries?: KeyValueCache<string>;
  /** Whole-response cache for finalized data and settings (gateway/response-cache.ts); off when absent. */
  responseCache?: ResponseCacheStore;
  /** Bounds of the entries clients can create in the response cache: size per entry, new entries per client and minute. */
  responseCacheBounds?: ResponseCacheBounds;
  /** How often the response cache re-reads the data generation (indexer resets); default 2 000 ms. */
  responseCacheGenerationPollMs?: number;
  /** Operation names always labelled as themselves in the metrics (the client package's), beyond the capped first-seen ones. */
  knownOperations?: readonly string[];
  /** More routes on the API port by path, e.g. the live page's (web/), handed in by the composition root. */
  routes?: Record<string, RouteHandler>;
  /** The page a browser gets at `GET /graphql` (GraphiQL, web/), handed in by the composition root; none when absent. */
  graphiql?: RouteHandler;
  /** Keyset pages of a wallet's bets (the history data, wired by the composition root): serves `GET /wallets/{address}/bets.csv`; no route when absent. */
  walletBetPages?: WalletBetPages;
}

/** The query limits and the per-client rate limit, as the composition root configures them. */
export type GatewayProtection = Pick<GatewayDeps, "limits" | "rateLimit" | "inFlight">;

export interface Gateway {
  health: HealthMonitor;
  listen(host: string, port: number): Promise<RunningHttpServer>;
  stop(): Promise<void>;
}

/** Subgraph name → routing URL, as written in the supergraph's `join__Graph` enum. */
export function supergraphRoutingUrls(supergraphSdl: string): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const match of supergraphSdl.matchAll(/@join__graph\(name:\s*"([^"]+)",\s*url:\s*"([^"]*)"\)/g)) {
    urls[match[1]!] = match[2]!;
  }
  return urls;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const logger = deps.logger.child({ service: "gateway" });
  // @apollo/gateway otherwise probes cloud metadata endpoints and exports usage data to Apollo
  // from its constructor. A self-hosted public data service phones nobody; opt in explicitly.
  process.env.APOLLO_TELEMETRY_DISABLED ??= "true";
  const metrics = createServiceMetrics("gateway", { knownOperations: deps.knownOperations });
  // The one owner of the served supergraph version: routing, /schema.graphql and the cache key follow it.
  const supergraph = createSupergraphSource({
    path: deps.supergraphPath,
    registry: deps.supergraphRegistry,
    requiredSubgraphs: [
      HEALTH_SUBGRAPH,
      ...(deps.routedSubgraphs ?? []),
      ...Object.keys(deps.subgraphUrls ?? {}),
      ...Object.keys(deps.inProcessSubgraphs ?? {}),
    ],
    logger,
    metrics: metrics.registry,
  });
  const routing = () => supergraphRoutingUrls(supergraph.current()?.sdl ?? "");
  const urlOf = (name: string, url: string | undefined) => deps.subgraphUrls?.[name] ?? url ?? "";

  const health = createHealthMonitor({
    db: deps.db,
    version: deps.version,
    logger,
    redis: deps.redis,
    maxLagBlocks: deps.health.maxLagBlocks,
    maxStalenessSeconds: deps.health.maxStalenessSeconds,
    subgraphUrls: () =>
      Object.fromEntries(
        Object.entries(routing())
          .filter(([name]) => name !== HEALTH_SUBGRAPH)
          .map(([name, url]) => [name, urlOf(name, url)]),
      ),
  });
  health.addChecks(() => [supergraph.healthCheck()]);
  const healthSchema = createHealthSchema(health);
  const subgraphFetch = new Histogram({
    name: "subgraph_fetch_duration_seconds",
    help: "Gateway → subgraph request latency",
    labelNames: ["subgraph"] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });

  const subgraphAgent = createSubgraphAgent();
  // Keyed by the served schema's hash too: an answer is never replayed under another supergraph.
  const generation = deps.responseCache
    ? keyedBySchema(watchDataGeneration(deps.db, { pollMs: deps.responseCacheGenerationPollMs ?? 2_000, logger }), supergraph)
    : undefined;
  const points = createPointsBudget({ budget: deps.rateLimit, logger });
  // Answers carry their own request's cost, which the cache must never replay to another request;
  // a hit whose text the key had to parse pays the points budget as a new document.
  const responseCache = deps.responseCache
    ? createResponseCache(deps.responseCache, {
        registry: metrics.registry,
        generation,
        metrics,
        storable: withoutCostExtension,
        chargeNewDocument: points.chargeNewDocument,
        bounds: { trustProxyHops: deps.trustProxyHops ?? deps.rateLimit?.trustProxyHops ?? 0, ...deps.responseCacheBounds },
      })
    : undefined;
  const inFlight = deps.inFlight && createInFlightCap(deps.inFlight, metrics.registry, points.knownHeaders);
  // Operations one subgraph answers whole skip the query plan (gateway/single-subgraph.ts).
  const singleSubgraph = createSingleSubgraphRouting({ plannedOnly: new Set([HEALTH_SUBGRAPH]) });
  const serviceFor = (name: string, url: string | undefined): GraphQLDataSource => {
    if (name === HEALTH_SUBGRAPH) return new LocalGraphQLDataSource(healthSchema);
    const inProcess = deps.inProcessSubgraphs?.[name];
    if (inProcess) return new InProcessSubgraphSource(name, inProcess, subgraphFetch);
    return new SubgraphDataSource(name, urlOf(name, url), subgraphAgent, subgraphFetch);
  };
  const federation = new ApolloGateway({
    logger,
    // The supergraph is a build output (npm run schema:compose, or a registry's): the gateway never
    // composes or introspects itself; gateway/supergraph-source.ts gates every version it is given.
    supergraphSdl: (hooks) => supergraph.manager(hooks),
    // Entity fetches carry each distinct representation once (gateway/entity-dedupe.ts).
    buildService: ({ name, url }) => singleSubgraph.source(name, dedupeRepresentations(serviceFor(name, url))),
  });
  // Cost analysis prices with the @cost/@listSize of the very supergraph each API schema comes from.
  followSupergraphPrices(federation, logger);

  // Operations run before Apollo Server's execution step (gateway/early-execution.ts).
  const early = executeEarly(deps.planEveryOperation ? federation : singleSubgraph.gateway(federation));
  const server = new ApolloServer({
    // Shutdown belongs to the process's composition root (bin/wiring.ts stopOnSignals). Apollo's own
    // SIGTERM/SIGINT handlers stop this server and re-raise the signal, killing the process before
    // the rest of its shutdown (bin/start-shutdown.test.ts).
    stopOnTerminationSignals: false,
    gateway: early.gateway,
    formatError: createErrorFormatter({ production: deps.production, logger }),
    includeStacktraceInErrorResponses: false,
    // A public, read-only API with no cookies or credentials: nothing for CSRF to steal, and GET
    // queries must work from plain links and CDNs.
    csrfPrevention: false,
    allowBatchedHttpRequests: false,
    // A document past this many tokens is refused while it is parsed, before validation's cost (gateway/validation-work.ts).
    parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
    // Parsed documents, sized with their text (gateway/document-store.ts).
    documentStore: createDocumentStore(),
    // A list or object literal where a scalar is expected never reaches the planner
    // (gateway/literal-shapes.ts); nor does a mutation or subscription (gateway/operation-types.ts).
    validationRules: [LeafLiteralShapes, QueriesOnly],
    // An answer one subgraph gave whole is written with that subgraph's bytes (gateway/forwarded-data.ts).
    stringifyResult,
    ...(deps.persistedQueries ? { persistedQueries: { cache: deps.persistedQueries } } : {}),
    // A public API: introspection answers in every mode (Apollo turns it off under NODE_ENV=production).
    introspection: true,
    // Apollo's cache control first (it merges the subgraphs' Cache-Control), then our fallback.
    plugins: [
      // Apollo's landing pages load from Apollo's CDN; browsers get the self-hosted GraphiQL instead (deps.graphiql).
      ApolloServerPluginLandingPageDisabled(),
      queryLimitsPlugin(deps.limits ?? DEFAULT_QUERY_LIMITS),
      // Charges the cost the limits measured before the operation runs (and before a cache hit is looked up), settles it after.
      points.plugin,
      ApolloServerPluginCacheControl(),
      cachePolicyPlugin(),
      // What the answer was read at, and its minBlock sent to every subgraph (gateway/read-at.ts).
      readAtPlugin(),
      metrics.plugin,
      ...(deps.schemaUsage ? [deps.schemaUsage.plugin] : []),
      ...(responseCache ? [responseCache.plugin] : []),
      early.plugin,
    ],
    logger,
  });

  const healthRoute = async (_req: IncomingMessage, res: ServerResponse) => {
    const report = await health.report();
    sendJson(res, report.status === "DOWN" ? 503 : 200, report, { "cache-control": "no-store" });
  };

  // The public schema as SDL, for clients' codegen without introspection (the API schema: no join__ machinery).
  // The served version's, with its hash as the ETag: the schema a client codegens from is the one answering it.
  let printed: { hash: string; sdl: string } | undefined;
  const sdlRoute = async (_req: IncomingMessage, res: ServerResponse) => {
    const served = supergraph.current();
    if (!served) throw new Error("no supergraph loaded"); // the route is mounted after the gateway loaded one
    // Printed once per supergraph served (never read from disk here): the route is public.
    if (printed?.hash !== served.hash) printed = { hash: served.hash, sdl: printSchema(apiSchemaOf(served.sdl)) };
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "public, max-age=60", etag: `"${served.hash}"` });
    res.end(printed.sdl);
  };

  const csvExport = deps.walletBetPages
    ? createCsvExportRoute({
        pages: deps.walletBetPages,
        networks: new NetworkDirectory(deps.db),
        logger,
        compression: deps.compression,
        rateLimit: points.settings,
      })
    : undefined;

  let http: RunningHttpServer | undefined;
  let stopping = false;
  // GET /livez and /readyz (core/probes.ts): ready while /health is not DOWN and this gateway is not stopping.
  const probes = probeRoutes(() => gatewayReadiness(health, { stopping: () => stopping }), deps.db);
  return {
    health,
    async listen(host, port) {
      await server.start();
      const listener = createGraphQLRequestListener({
        server,
        maxBodyBytes: deps.maxBodyBytes,
        context: async (req) => points.context(req),
        routes: { ...deps.routes, ...probes, "/health": healthRoute, "/metrics": metrics.route, "/schema.graphql": sdlRoute },
        patternRoutes: csvExport ? [{ pattern: CSV_PATH, handler: csvExport }] : [],
        browserPage: deps.graphiql,
        limitInFlight: inFlight?.admit,
        takeSeat: inFlight?.takeSeat,
        leaveSeat: inFlight?.leaveSeat,
        admit: points.admit,
        admitRoute: points.admitRoute,
        compression: deps.compression,
        // Response cache hits are replayed from stored bytes before Apollo Server (after the rate limit).
        beforeGraphQL: responseCache?.beforeGraphQL,
        // The subgraphs share expensive work out per client: they learn who asks from here, by the rate limit's rule.
        clientAddressOf: (req) => clientAddress(req, deps.trustProxyHops ?? deps.rateLimit?.trustProxyHops ?? 0),
      });
      http = await listen(listener, host, port, { writeDeadlineMs: deps.writeDeadlineMs, registry: metrics.registry });
      logger.info({ url: `${http.url}/graphql` }, "gateway listening");
      return http;
    },
    async stop() {
      stopping = true;
      await http?.close();
      await server.stop();
      await subgraphAgent.close();
      generation?.stop();
      await deps.schemaUsage?.stop();
    },
  };
}
