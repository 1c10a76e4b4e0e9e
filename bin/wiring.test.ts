import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { silentLogger } from "../core/logger.ts";
import { RedisResponseCacheStore } from "../gateway/response-cache.ts";
import { GATEWAY_SECTIONS, gatewaySettings, REALTIME_SECTIONS, realtimeSettings, SERVICE_VERSION, subgraphUrlOverrides } from "./wiring.ts";

// Configuration → options, as every process, the tests' stack and the benchmarks' servers get them.

const redis = new Redis({ lazyConnect: true });
afterAll(() => redis.disconnect());

describe("gatewaySettings", () => {
  it("maps the defaults", () => {
    const settings = gatewaySettings(loadConfig(GATEWAY_SECTIONS, {}), { logger: silentLogger() });
    expect(settings).toMatchObject({
      production: false,
      version: SERVICE_VERSION,
      supergraphPath: "./supergraph.graphql",
      subgraphUrls: {},
      maxBodyBytes: 65536,
      health: { maxLagBlocks: 64, maxStalenessSeconds: 300 },
      limits: { maxDepth: 8, maxAliases: 30, maxCost: 5000 },
      responseCacheGenerationPollMs: 2000,
    });
    expect(settings.rateLimit).toMatchObject({ policy: { capacity: 10_000, refillPerSecond: 1_000 }, trustProxyHops: 0 });
    expect(settings.responseCache).toBeDefined();
    expect(settings.redis).toBeUndefined();
  });

  it("names the client package's operations as known metric labels", () => {
    const settings = gatewaySettings(loadConfig(GATEWAY_SECTIONS, {}), { logger: silentLogger() });
    expect(settings.knownOperations).toEqual(expect.arrayContaining(["Networks", "BetWithProof", "PlayerBets"]));
  });

  it("maps each variable onto its option", () => {
    const config = loadConfig(GATEWAY_SECTIONS, {
      NODE_ENV: "production",
      HISTORY_SUBGRAPH_URL: "http://history:4003/graphql",
      RATE_LIMIT_POINTS: "0",
      RESPONSE_CACHE: "off",
      MAX_QUERY_COST: "77",
      HEALTH_MAX_LAG_BLOCKS: "5",
    });
    const settings = gatewaySettings(config, { logger: silentLogger() });
    expect(settings).toMatchObject({
      production: true,
      subgraphUrls: { history: "http://history:4003/graphql" },
      limits: { maxCost: 77 },
      health: { maxLagBlocks: 5 },
    });
    expect(settings.rateLimit).toBeUndefined();
    expect(settings.responseCache).toBeUndefined();
  });

  it("refuses a points budget smaller than the largest accepted query: that request could never pass", () => {
    const settings = (env: Record<string, string>) => gatewaySettings(loadConfig(GATEWAY_SECTIONS, env), { logger: silentLogger() });
    expect(() => settings({ RATE_LIMIT_POINTS: "4999" })).toThrow(/RATE_LIMIT_POINTS: must be 0 \(off\) or at least MAX_QUERY_COST \(5000\)/);
    expect(settings({ RATE_LIMIT_POINTS: "4999", MAX_QUERY_COST: "4999" }).rateLimit?.policy).toEqual({ capacity: 4999, refillPerSecond: 1000 });
    expect(settings({ RATE_LIMIT_POINTS: "0" }).rateLimit).toBeUndefined();
  });

  it("shares the response cache through Redis when the gateway has it, and checks it in /health", () => {
    const settings = gatewaySettings(loadConfig(GATEWAY_SECTIONS, {}), { logger: silentLogger(), redis });
    expect(settings.responseCache).toBeInstanceOf(RedisResponseCacheStore);
    // One guarded client (REDIS_COMMAND_TIMEOUT_MS) for the rate limit, the cache and /health.
    expect(settings.redis).toMatchObject({ client: redis });
  });

  it("routes to subgraphs by the registry's variables", () => {
    const config = loadConfig(["subgraphs"], {
      NETWORKS_SUBGRAPH_URL: "http://n:1/graphql",
      RESULTS_SUBGRAPH_URL: "http://r:2/graphql",
      HISTORY_SUBGRAPH_URL: "",
    });
    expect(subgraphUrlOverrides(config)).toEqual({ networks: "http://n:1/graphql", results: "http://r:2/graphql" });
  });
});

describe("realtimeSettings", () => {
  it("maps the REALTIME_* variables, the replay window deciding what pruning deletes", () => {
    const settings = realtimeSettings(
      loadConfig(REALTIME_SECTIONS, {
        REALTIME_TRANSPORTS: "websocket",
        REALTIME_REPLAY_MAX_UPDATES: "50",
        REALTIME_REPLAY_MAX_AGE_SECONDS: "60",
        REALTIME_PRUNE_INTERVAL_MS: "0",
        REALTIME_MAX_BUFFERED_BYTES: "0",
      }),
    );
    expect(settings).toMatchObject({
      path: "/ws",
      redisPrefix: "bets:",
      publisher: false,
      transports: ["websocket"],
      limits: { maxSubscriptions: 200, maxChainIds: 32, eventsPerSecond: 20, maxMessageBytes: 16384, maxBufferedBytes: 0 },
      retention: { maxUpdates: 50, maxAgeMs: 60_000 },
      prune: { intervalMs: 0, batchSize: 1000, retention: { maxUpdates: 50, maxAgeMs: 60_000 } },
      pingIntervalMs: 25_000,
      pingTimeoutMs: 20_000,
      pollIntervalMs: 1000,
      feedTimeoutMs: 5000,
      drainGraceMs: 10_000,
    });
    expect(realtimeSettings(loadConfig(REALTIME_SECTIONS, {})).transports).toEqual(["polling", "websocket"]);
  });
});
