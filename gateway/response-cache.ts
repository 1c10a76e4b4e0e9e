import type { ApolloServerPlugin, HTTPGraphQLRequest } from "@apollo/server";
import { InMemoryLRUCache, type KeyValueCache, type KeyValueCacheSetOptions } from "@apollo/utils.keyvaluecache";
import { Redis } from "ioredis";
import { Counter, type Registry } from "prom-client";
import type { Database } from "../core/db.ts";
import type { AnswerBeforeGraphQL } from "../core/http.ts";
import type { ServiceMetrics } from "../core/metrics.ts";
import type { Logger } from "../core/logger.ts";
import { guardRedis, type GuardedRedis } from "../core/redis.ts";
import { MAX_AGE } from "../core/max-age.ts";
import { asksHealth } from "./cache-policy.ts";
import { createClientBudget } from "./cache-entry-budget.ts";
import { clientAddress } from "../core/client-address.ts";
import { createResponseReplay, type Replayable, type ResponseReplayOptions } from "./response-replay.ts";

// A whole-response cache at the gateway: a hit is replayed before Apollo Server is entered (no
// parse, no plan, no subgraph, no SQL). The key is gateway/cache-key.ts's: the normalised operation
// and only the variables it declares. The subgraphs' Cache-Control hints, merged by the gateway,
// decide what is stored and for how long; each answer is stored once, as the bytes Apollo Server
// wrote (gateway/response-replay.ts), and only within bounds: a size per entry and a budget of
// new entries per client.
//
// Only answers that may be kept at least a minute are stored: finalized bets (an hour) and network
// settings (a minute). Anything that moves with the head (`live`, 2 s) is never stored: a client
// told by Socket.IO that its bet changed refetches at once and must get the new state, not a copy
// up to two seconds old; those answers are single indexed lookups, and their hit rate within 2 s
// would be low anyway. A CDN may still keep them for their 2 s.

/** Answers with a shorter merged maxAge are never stored. */
export const RESPONSE_CACHE_MIN_MAX_AGE = MAX_AGE.settings;

/**
 * Where cached answers live: Redis (shared by every gateway replica) or an in-process LRU.
 * `touch` marks a key used without reading it (for the store's LRU), where the store can;
 * `available` is false while the store is known to be away (nothing is written then).
 */
export type ResponseCacheStore = KeyValueCache<string> & { touch?(key: string): Promise<void>; available?(): boolean };

/**
 * An in-process LRU bounded both in answers and in bytes (UTF-16 code units of the stored text).
 * Each answer is two store entries (gateway/response-replay.ts: its header and its bytes).
 */
export function createMemoryResponseCacheStore(bounds: { maxEntries: number; maxBytes: number }): ResponseCacheStore {
  const lru = new InMemoryLRUCache<string>({ max: bounds.maxEntries * 2, maxSize: bounds.maxBytes });
  return {
    get: (key) => lru.get(key),
    set: (key, value, options) => lru.set(key, value, options),
    delete: (key) => lru.delete(key),
    touch: async (key) => {
      await lru.get(key); // a read is what moves an entry to the front
    },
  };
}

export interface RedisResponseCacheOptions {
  logger: Logger;
  /** Prefix of every key, so replicas share entries and a deployment can start afresh. */
  prefix: string;
  /** With a bare client: a command slower than this counts as a failure, the request goes on uncached. */
  timeoutMs?: number;
  /** With a bare client: while Redis is away, how often it is tried again (in the background). */
  retryAfterMs?: number;
}

/**
 * A `KeyValueCache` over Redis whose failures are misses: a Redis that is down, reconnecting or
 * slow never fails or stalls a request, it only makes it uncached. Entries expire after their
 * maxAge (`SET … EX`). Commands go through a GuardedRedis (core/redis.ts) — the gateway's one,
 * shared with the rate limit, or its own around a bare client: each has a deadline, and while
 * Redis is away the store skips it. The first failure and the recovery are each logged once.
 */
export class RedisResponseCacheStore implements ResponseCacheStore {
  private readonly redis: GuardedRedis;

  private readonly options: RedisResponseCacheOptions;
  constructor(redis: Redis | GuardedRedis, options: RedisResponseCacheOptions) {
    this.options = options;
    this.redis = redis instanceof Redis ? guardRedis(redis, { timeoutMs: options.timeoutMs ?? 250, probeIntervalMs: options.retryAfterMs }) : redis;
    this.redis.onChange((failure) => {
      if (failure) options.logger.warn({ err: `redis ${failure}` }, "response cache: redis unavailable, serving uncached");
      else options.logger.info("response cache: redis available again");
    });
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.run((redis) => redis.get(this.options.prefix + key));
    return value ?? undefined;
  }

  async set(key: string, value: string, options?: KeyValueCacheSetOptions): Promise<void> {
    const ttl = Math.ceil(options?.ttl ?? 0);
    // Never an entry without an expiry: Redis memory is bounded by what maxAge lets live.
    if (ttl <= 0) return;
    await this.run((redis) => redis.set(this.options.prefix + key, value, "EX", ttl));
  }

  async delete(key: string): Promise<boolean> {
    return ((await this.run((redis) => redis.del(this.options.prefix + key))) ?? 0) > 0;
  }

  available(): boolean {
    return this.redis.failure() === null;
  }

  async touch(key: string): Promise<void> {
    await this.run((redis) => redis.touch(this.options.prefix + key));
  }

  private async run<T>(command: (redis: Redis) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.redis.run(command);
    } catch {
      return undefined; // a miss; the guard reports the outage (onChange above)
    }
  }
}

/**
 * The indexed data's generation: how many times the indexer has reset a network (a redeployed
 * contract, a chain that no longer holds the indexed history), summed over networks. It is part of
 * every cache key: "finalized" answers never change otherwise, but after a reset the same bet ids
 * may name other bets, and every stored answer must become unreachable — within one poll, in every
 * gateway replica, whatever the store. Until the first read succeeds nothing is cached; when the
 * database does not answer, the last generation read stays in use.
 */
export interface DataGeneration {
  current(): string | undefined;
  stop(): void;
}

export function watchDataGeneration(db: Database, options: { pollMs: number; logger: Logger }): DataGeneration {
  let generation: string | undefined;
  let failing = false;
  const read = async () => {
    try {
      const { _sum } = await db.prisma.indexingCursor.aggregate({ _sum: { resets: true } });
      generation = String(_sum.resets ?? 0);
      if (failing) options.logger.info("response cache: data generation readable again");
      failing = false;
    } catch (error) {
      if (!failing) options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "response cache: cannot read the data generation");
      failing = true;
    }
  };
  void read();
  const timer = setInterval(() => void read(), options.pollMs);
  timer.unref();
  return {
    current: () => generation,
    stop: () => clearInterval(timer),
  };
}

/** The response cache as the gateway wires it: Apollo Server's plugin (the rules) and the byte path in front of it (core/http.ts). */
export interface ResponseCache {
  plugin: ApolloServerPlugin;
  beforeGraphQL: AnswerBeforeGraphQL;
}

/** What bounds the entries clients can create. */
export interface ResponseCacheBounds {
  /** Bound of what one answer stores (header, body and compressed forms; gateway/response-replay.ts); default DEFAULT_MAX_ENTRY_BYTES (256 KiB). */
  maxEntryBytes?: number;
  /** New entries one client may add per minute (across gateways with `sharedBudget`); default DEFAULT_NEW_ENTRIES_PER_MINUTE. */
  newEntriesPerMinute?: number;
  /** The rate limit's Redis: new entries are counted there, across every gateway (each counts alone while it is away). */
  sharedBudget?: GuardedRedis;
  /** Proxies in front whose X-Forwarded-For names the client (the rate limit's TRUST_PROXY_HOPS). */
  trustProxyHops?: number;
}

/** Default budget of new entries per client and minute. */
export const DEFAULT_NEW_ENTRIES_PER_MINUTE = 120;

export interface ResponseCacheOptions {
  registry?: Registry;
  generation?: DataGeneration;
  /** Request metrics of the answers replayed before Apollo Server (core/metrics.ts). */
  metrics?: Pick<ServiceMetrics, "record">;
  /** A computed body as it may be stored for replay: without what belongs to its request alone (its cost). */
  storable?: (body: string) => string;
  bounds?: ResponseCacheBounds;
  /** The points budget's price of a hit whose text the key parsed anew (gateway/points-budget.ts); such hits are free of it when absent. */
  chargeNewDocument?: ResponseReplayOptions["chargeNewDocument"];
  now?: () => number;
}

function newEntryBudget(bounds: ResponseCacheBounds, now: () => number) {
  return createClientBudget({ perMinute: bounds.newEntriesPerMinute ?? DEFAULT_NEW_ENTRIES_PER_MINUTE, redis: bounds.sharedBudget, now });
}

/**
 * The response cache: this plugin decides what may be kept — public answers with a merged maxAge
 * of at least RESPONSE_CACHE_MIN_MAX_AGE, never `health`, never errors or partial data — and the
 * byte path (gateway/response-replay.ts) stores the bytes of those answers, once, under
 * gateway/cache-key.ts's key, within the bounds, and replays them before Apollo Server is even
 * entered. Every answer says `X-Cache: HIT` or `MISS`; a hit also carries `Age`. With a registry,
 * `graphql_response_cache_total{result}` counts each answer as `hit`, `stored` (a miss written to
 * the cache) or `miss` (not cacheable, past a bound, or skipped).
 */
export function createResponseCache(store: ResponseCacheStore, options: ResponseCacheOptions = {}): ResponseCache {
  const { registry, generation } = options;
  const now = options.now ?? Date.now;
  // Without a known generation (not read yet) the cache is neither read nor written.
  const generationKnown = () => !generation || generation.current() !== undefined;
  const answers = registry
    ? new Counter({
        name: "graphql_response_cache_total",
        help: "GraphQL answers by response cache outcome: hit, stored (a miss now cached), miss",
        labelNames: ["result"] as const,
        registers: [registry],
      })
    : undefined;
  // Answers that may be kept, by the HTTP request core/http.ts built: the byte path's only input.
  const replayable = new WeakMap<HTTPGraphQLRequest, Replayable>();
  const plugin: ApolloServerPlugin = {
    async requestDidStart() {
      return {
        async willSendResponse(context) {
          // A hit is replayed before Apollo Server is entered: every answer computed here is a miss.
          context.response.http.headers.set("x-cache", "MISS");
          const { operation, document, overallCachePolicy, response } = context;
          const policy = overallCachePolicy.policyIfCacheable();
          const body = response.body;
          const keep =
            generationKnown() &&
            policy !== null &&
            policy.scope === "PUBLIC" &&
            policy.maxAge >= RESPONSE_CACHE_MIN_MAX_AGE &&
            !asksHealth(operation, document) &&
            body.kind === "single" &&
            body.singleResult.data != null &&
            !body.singleResult.errors;
          if (keep && context.request.http) {
            replayable.set(context.request.http, { cacheTime: now(), maxAge: policy.maxAge, operation: context.operationName ?? null });
          }
        },
      };
    },
  };
  const bounds = options.bounds ?? {};
  const hops = bounds.trustProxyHops ?? 0;
  const beforeGraphQL = createResponseReplay({
    store,
    generation,
    decisionFor: (request) => replayable.get(request),
    storable: options.storable,
    maxEntryBytes: bounds.maxEntryBytes,
    newEntries: newEntryBudget(bounds, now),
    clientOf: (req) => clientAddress(req, hops),
    chargeNewDocument: options.chargeNewDocument,
    onComputed: (stored) => answers?.inc({ result: stored ? "stored" : "miss" }),
    onReplay: (operation, seconds) => {
      answers?.inc({ result: "hit" });
      options.metrics?.record(operation, "ok", seconds);
    },
    now,
  });
  return { plugin, beforeGraphQL };
}
