import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginCacheControl } from "@apollo/server/plugin/cacheControl";
import { DEFAULT_COMPRESSION } from "../core/compression.ts";
import { createGraphQLRequestListener, listen, type RunningHttpServer } from "../core/http.ts";
import { silentLogger } from "../core/logger.ts";
import { createServiceMetrics } from "../core/metrics.ts";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";
import { cachePolicyPlugin } from "../gateway/cache-policy.ts";
import { attachPrices } from "../gateway/cost-directives.ts";
import { createPointsBudget, withoutCostExtension } from "../gateway/points-budget.ts";
import {
  createMemoryResponseCacheStore,
  createResponseCache,
  type DataGeneration,
  type ResponseCacheBounds,
  type ResponseCacheOptions,
  type ResponseCacheStore,
} from "../gateway/response-cache.ts";

// A small schema of its own behind core/http.ts with the gateway's cache plugins (and a points
// budget when asked): what gateway/response-replay*.test.ts serve the response cache's byte path with.
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

// Its prices, as a subgraph's SDL states them and the gateway attaches them to the schema it serves.
const PRICED: ApolloServerPlugin = {
  serverWillStart: async ({ schema }) => void attachPrices(schema, "type Query { bets: [Bet] @listSize(assumedSize: 10) }"),
};
let executions = 0;
/** How many times a resolver ran, in this process. */
export const executionCount = () => executions;
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

export interface Served {
  url: string;
  entered: () => number; // requests that entered Apollo Server
  metrics: () => Promise<string>;
  close(): Promise<void>;
}

let generation: string | undefined = "0";
/** What the fake data generation says from now on (undefined: unknown). */
export const setGeneration = (next: string | undefined) => {
  generation = next;
};
const fakeGeneration: DataGeneration = { current: () => generation, stop: () => undefined };

/** The schema behind core/http.ts, with the response cache (and a points budget of `rateLimit` points, on a frozen clock) when given. */
export async function serve(
  options: {
    store?: ResponseCacheStore;
    rateLimit?: number;
    bounds?: ResponseCacheBounds;
    now?: () => number;
    chargeNewDocument?: ResponseCacheOptions["chargeNewDocument"];
  } = {},
): Promise<Served> {
  const metrics = createServiceMetrics("test", { defaultMetrics: false });
  const cache = options.store
    ? createResponseCache(options.store, {
        registry: metrics.registry,
        generation: fakeGeneration,
        metrics,
        storable: withoutCostExtension,
        bounds: options.bounds,
        chargeNewDocument: options.chargeNewDocument,
        now: options.now,
      })
    : undefined;
  const policy = { capacity: options.rateLimit ?? 1, refillPerSecond: 1 };
  const points = options.rateLimit
    ? createPointsBudget({ budget: { store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 0, now: () => 1_000_000 }, logger: silentLogger() })
    : undefined;
  const server = new ApolloServer({
    typeDefs: TYPE_DEFS,
    resolvers,
    csrfPrevention: false,
    plugins: [
      PRICED,
      ApolloServerPluginCacheControl(),
      cachePolicyPlugin(),
      metrics.plugin,
      ...(points ? [points.plugin] : []),
      ...(cache ? [cache.plugin] : []),
    ],
    logger: silentLogger(),
  });
  await server.start();
  let entered = 0;
  const execute = server.executeHTTPGraphQLRequest.bind(server);
  server.executeHTTPGraphQLRequest = (args) => {
    entered++;
    return execute(args);
  };
  const running: RunningHttpServer = await listen(
    createGraphQLRequestListener({
      server,
      context: async (req) => points?.context(req) ?? {},
      maxBodyBytes: 65_536,
      compression: DEFAULT_COMPRESSION,
      routes: { "/metrics": metrics.route },
      admit: points?.admit,
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

/** `memory` (default a fresh in-process store) calling `onSet(key, value)` for each write. */
export function recording(
  onSet: (key: string, value: string) => void,
  memory = createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 16 * 1024 * 1024 }),
  onGet?: (key: string, value: string | undefined) => void,
): ResponseCacheStore {
  const set: ResponseCacheStore["set"] = (key, value, options) => {
    onSet(key, value);
    return memory.set(key, value, options);
  };
  const get: ResponseCacheStore["get"] = async (key) => {
    const value = await memory.get(key);
    onGet?.(key, value);
    return value;
  };
  return { get, delete: (key) => memory.delete(key), set };
}

export const BETS = `query Page($ids: [ID!]!) { bets(ids: $ids) { id payout proof } }`;
export const IDS = Array.from({ length: 20 }, (_, i) => String(i + 1));
