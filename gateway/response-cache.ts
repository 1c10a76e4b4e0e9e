import type { ApolloServerPlugin } from "@apollo/server";
import ApolloServerPluginResponseCache from "@apollo/server-plugin-response-cache";
import { InMemoryLRUCache, type KeyValueCache, type KeyValueCacheSetOptions } from "@apollo/utils.keyvaluecache";
import type { Redis } from "ioredis";
import { Counter, type Registry } from "prom-client";
import { MAX_AGE } from "../core/cache-hints.ts";
import type { Config } from "../core/config.ts";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { asksHealth } from "./cache-policy.ts";

// A whole-response cache at the gateway, on Apollo's response cache plugin: the key is a SHA-256
// of the query text (an APQ hash is resolved to its text first), the operation name and the
// variables; a hit skips the query plan, so no subgraph and no SQL is reached. The subgraphs'
// Cache-Control hints, merged by the gateway, decide what is stored and for how long.
//
// Only answers that may be kept at least a minute are stored: finalized bets (an hour) and network
// settings (a minute). Anything that moves with the head (`live`, 2 s) is never stored: a client
// told by Socket.IO that its bet changed refetches at once and must get the new state, not a copy
// up to two seconds old; those answers are single indexed lookups, and their hit rate within 2 s
// would be low anyway. A CDN may still keep them for their 2 s.

/** Answers with a shorter merged maxAge are never stored. */
export const RESPONSE_CACHE_MIN_MAX_AGE = MAX_AGE.settings;

/** Where cached answers live: Redis (shared by every gateway replica) or an in-process LRU. */
export type ResponseCacheStore = KeyValueCache<string>;

/** An in-process LRU bounded both in entries and in bytes (UTF-16 code units of the stored JSON). */
export function createMemoryResponseCacheStore(bounds: { maxEntries: number; maxBytes: number }): ResponseCacheStore {
  return new InMemoryLRUCache<string>({ max: bounds.maxEntries, maxSize: bounds.maxBytes });
}

export interface RedisResponseCacheOptions {
  logger: Logger;
  /** Prefix of every key, so replicas share entries and a deployment can start afresh. */
  prefix: string;
  /** A command slower than this counts as a failure: the request goes on uncached. */
  timeoutMs?: number;
  /** After a failure Redis is left alone this long, so a hung Redis costs one timeout per interval. */
  retryAfterMs?: number;
}

/**
 * A `KeyValueCache` over ioredis whose failures are misses: a Redis that is down, reconnecting or
 * slow never fails or stalls a request, it only makes it uncached. Entries expire after their
 * maxAge (`SET … EX`). After a failure the store skips Redis for `retryAfterMs`. The first
 * failure and the recovery are each logged once.
 */
export class RedisResponseCacheStore implements ResponseCacheStore {
  private available = true;
  private answeredOnce = false;
  private skipUntil = 0;
  private readonly timeoutMs: number;
  private readonly retryAfterMs: number;

  constructor(private readonly redis: Redis, private readonly options: RedisResponseCacheOptions) {
    this.timeoutMs = options.timeoutMs ?? 250;
    this.retryAfterMs = options.retryAfterMs ?? 1000;
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.run(() => this.redis.get(this.options.prefix + key));
    return value ?? undefined;
  }

  async set(key: string, value: string, options?: KeyValueCacheSetOptions): Promise<void> {
    const ttl = Math.ceil(options?.ttl ?? 0);
    // Never an entry without an expiry: Redis memory is bounded by what maxAge lets live.
    if (ttl <= 0) return;
    await this.run(() => this.redis.set(this.options.prefix + key, value, "EX", ttl));
  }

  async delete(key: string): Promise<boolean> {
    return ((await this.run(() => this.redis.del(this.options.prefix + key))) ?? 0) > 0;
  }

  private async run<T>(command: () => Promise<T>): Promise<T | undefined> {
    if (Date.now() < this.skipUntil) return undefined;
    // Until ioredis is connected, commands would wait in its offline queue: skip Redis outright.
    // The first connection in progress is no failure; `wait` is a lazy client that connects on
    // its first command.
    const { status } = this.redis;
    if (!this.answeredOnce && (status === "connecting" || status === "connect")) return undefined;
    if (status !== "ready" && status !== "wait") {
      this.markDown(`redis ${status}`);
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const result = await Promise.race([command(), timeout]);
      this.answeredOnce = true;
      this.markUp();
      return result;
    } catch (error) {
      this.markDown(error instanceof Error ? error.message : String(error));
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private markDown(reason: string): void {
    this.skipUntil = Date.now() + this.retryAfterMs;
    if (!this.available) return;
    this.available = false;
    this.options.logger.warn({ err: reason }, "response cache: redis unavailable, serving uncached");
  }

  private markUp(): void {
    if (this.available) return;
    this.available = true;
    this.options.logger.info("response cache: redis available again");
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

/** The configured store: Redis when the gateway has one, else the in-process LRU; none when off. */
export function responseCacheStoreFromConfig(config: Config, options: { redis?: Redis; logger: Logger }): ResponseCacheStore | undefined {
  if (!config.RESPONSE_CACHE) return undefined;
  if (options.redis) return new RedisResponseCacheStore(options.redis, { logger: options.logger, prefix: config.RESPONSE_CACHE_REDIS_PREFIX });
  return createMemoryResponseCacheStore({ maxEntries: config.RESPONSE_CACHE_MAX_ENTRIES, maxBytes: config.RESPONSE_CACHE_MAX_MB * 1024 * 1024 });
}

/**
 * Apollo's response cache restricted to what this API may keep: public answers with a merged
 * maxAge of at least RESPONSE_CACHE_MIN_MAX_AGE, never `health`, never errors or partial data
 * (the plugin stores only answers without errors). Every answer says `X-Cache: HIT` or `MISS`; a
 * hit also carries `Age`. With a registry, `graphql_response_cache_total{result}` counts each
 * answer as `hit`, `stored` (a miss written to the cache) or `miss` (not cacheable, or skipped).
 */
export function responseCachePlugin(store: ResponseCacheStore, options: { registry?: Registry; generation?: DataGeneration } = {}): ApolloServerPlugin {
  const { registry, generation } = options;
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
  // The plugin asks shouldWriteToCache once per cacheable answer, just before it stores it.
  const stored = new WeakSet<object>();
  const inner = ApolloServerPluginResponseCache({
    cache: store,
    extraCacheKeyData: async () => generation?.current() ?? null,
    shouldReadFromCache: async ({ operation, document }) => generationKnown() && !asksHealth(operation, document),
    shouldWriteToCache: async (context) => {
      const { operation, document, overallCachePolicy } = context;
      const policy = overallCachePolicy.policyIfCacheable();
      const write = generationKnown() && policy !== null && policy.scope === "PUBLIC" && policy.maxAge >= RESPONSE_CACHE_MIN_MAX_AGE && !asksHealth(operation, document);
      // The plugin then skips answers with errors or without data: those are not stored either.
      const body = context.response.body;
      if (write && body?.kind === "single" && body.singleResult.data && !body.singleResult.errors) stored.add(context.request);
      return write;
    },
  });
  return {
    async requestDidStart(requestContext) {
      const listener = (await inner.requestDidStart?.(requestContext)) ?? {};
      return {
        ...listener,
        async willSendResponse(context) {
          await listener.willSendResponse?.(context);
          const hit = context.metrics.responseCacheHit === true;
          context.response.http.headers.set("x-cache", hit ? "HIT" : "MISS");
          answers?.inc({ result: hit ? "hit" : stored.has(context.request) ? "stored" : "miss" });
        },
      };
    },
  };
}
