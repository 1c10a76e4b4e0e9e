import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../core/config.ts";
import { stalledServerDeadline } from "../core/db.ts";
import { createLogger, silentLogger } from "../core/logger.ts";
import { RedisResponseCacheStore } from "../gateway/response-cache.ts";
import { decodeCursor, encodeCursor, queryFingerprints } from "../subgraphs/history/cursor.ts";
import {
  cursorKeys,
  cursorSecretProblem,
  GATEWAY_SECTIONS,
  gatewaySettings,
  pointsStore,
  REALTIME_SECTIONS,
  realtimeSettings,
  replayBudget,
  SERVICE_VERSION,
  stalledServerTimeout,
  stopOnSignals,
  subgraphUrlOverrides,
} from "./wiring.ts";

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
    expect(settings.rateLimit).toMatchObject({ policy: { capacity: 10_000, refillPerSecond: 1_000, initial: 5_000 }, trustProxyHops: 0 });
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
    expect(settings({ RATE_LIMIT_POINTS: "4999", MAX_QUERY_COST: "4999" }).rateLimit?.policy).toEqual({ capacity: 4999, refillPerSecond: 1000, initial: 4999 });
    expect(settings({ RATE_LIMIT_POINTS: "0" }).rateLimit).toBeUndefined();
  });

  it("starts a new client's budget at RATE_LIMIT_POINTS_INITIAL, between the largest accepted query and the budget", () => {
    const settings = (env: Record<string, string>) => gatewaySettings(loadConfig(GATEWAY_SECTIONS, env), { logger: silentLogger() });
    expect(settings({}).rateLimit?.policy).toEqual({ capacity: 10_000, refillPerSecond: 1_000, initial: 5_000 });
    expect(settings({ RATE_LIMIT_POINTS_INITIAL: "10000" }).rateLimit?.policy).toEqual({ capacity: 10_000, refillPerSecond: 1_000, initial: 10_000 });
    expect(() => settings({ RATE_LIMIT_POINTS_INITIAL: "4999" })).toThrow(/RATE_LIMIT_POINTS_INITIAL \(4999\): must be at least MAX_QUERY_COST \(5000\)/);
    // A larger start than the budget holds is a full budget (RATE_LIMIT_POINTS may be lowered alone).
    expect(settings({ RATE_LIMIT_POINTS_INITIAL: "10001" }).rateLimit?.policy).toMatchObject({ initial: 10_000 });
    expect(() => settings({ MAX_QUERY_COST: "8000" })).toThrow(/RATE_LIMIT_POINTS_INITIAL \(5000\): must be at least MAX_QUERY_COST \(8000\)/);
    expect(() => settings({ RATE_LIMIT_POINTS_INITIAL: "0" })).toThrow(/RATE_LIMIT_POINTS_INITIAL/);
  });

  it("caps each client's requests in flight at 8 unless told otherwise (0: off), by the budget's address rule", () => {
    const settings = (env: Record<string, string>) => gatewaySettings(loadConfig(GATEWAY_SECTIONS, env), { logger: silentLogger() });
    expect(settings({}).inFlight).toEqual({ maxPerClient: 8, runningPerClient: 2, runningPerGateway: 16, trustProxyHops: 0 });
    expect(
      settings({ RATE_LIMIT_MAX_IN_FLIGHT: "3", RATE_LIMIT_RUNNING_PER_CLIENT: "1", RATE_LIMIT_RUNNING_PER_GATEWAY: "0", TRUST_PROXY_HOPS: "1" }).inFlight,
    ).toEqual({
      maxPerClient: 3,
      runningPerClient: 1,
      runningPerGateway: 0,
      trustProxyHops: 1,
    });
    expect(settings({ RATE_LIMIT_MAX_IN_FLIGHT: "0" }).inFlight).toBeUndefined();
    expect(() => settings({ RATE_LIMIT_MAX_IN_FLIGHT: "-1" })).toThrow(/RATE_LIMIT_MAX_IN_FLIGHT/);
    expect(() => settings({ RATE_LIMIT_MAX_IN_FLIGHT: "many" })).toThrow(/RATE_LIMIT_MAX_IN_FLIGHT/);
    // More running than may be open would silently turn turns off: refused at start-up.
    expect(() => settings({ RATE_LIMIT_MAX_IN_FLIGHT: "4", RATE_LIMIT_RUNNING_PER_CLIENT: "5" })).toThrow(
      /RATE_LIMIT_RUNNING_PER_CLIENT: must be 0 \(all run\) or at most RATE_LIMIT_MAX_IN_FLIGHT \(4\)/,
    );
    expect(settings({ RATE_LIMIT_MAX_IN_FLIGHT: "4", RATE_LIMIT_RUNNING_PER_CLIENT: "4" }).inFlight?.runningPerClient).toBe(4);
    expect(settings({ RATE_LIMIT_MAX_IN_FLIGHT: "0", RATE_LIMIT_RUNNING_PER_CLIENT: "5" }).inFlight).toBeUndefined();
  });

  it("shares the response cache through Redis when the gateway has it, and checks it in /health", () => {
    const settings = gatewaySettings(loadConfig(GATEWAY_SECTIONS, {}), { logger: silentLogger(), redis });
    expect(settings.responseCache).toBeInstanceOf(RedisResponseCacheStore);
    // One guarded client (REDIS_COMMAND_TIMEOUT_MS) for the rate limit, the cache and /health.
    expect(settings.redis).toMatchObject({ client: redis });
  });

  it("keeps the response cache in its own Redis when given one (RESPONSE_CACHE_REDIS_URL), apart from the rate limit's keys", async () => {
    const limiter = new Redis({ db: 14 });
    const cache = new Redis({ db: 15 });
    try {
      await Promise.all([limiter.ping(), cache.ping()]);
      const settings = gatewaySettings(
        loadConfig(GATEWAY_SECTIONS, { RESPONSE_CACHE_REDIS_URL: "redis://127.0.0.1:6379/15", RESPONSE_CACHE_MAX_ENTRY_KB: "64", TRUST_PROXY_HOPS: "1" }),
        { logger: silentLogger(), redis: limiter, cacheRedis: cache },
      );
      expect(settings.redis).toMatchObject({ client: limiter });
      const { sharedBudget, ...bounds } = settings.responseCacheBounds ?? {};
      expect(bounds).toEqual({ maxEntryBytes: 64 * 1024, newEntriesPerMinute: 120, trustProxyHops: 1 });
      // New entries are counted in the rate limit's Redis, which never evicts, not in the cache's.
      expect(sharedBudget).toBe(settings.redis);
      const key = `wiring-test-${process.pid}`;
      await settings.responseCache!.set(key, "an answer", { ttl: 60 });
      expect(await cache.get(`responsecache:${key}`)).toBe("an answer");
      expect(await limiter.exists(`responsecache:${key}`)).toBe(0);
      await cache.del(`responsecache:${key}`);
    } finally {
      limiter.disconnect();
      cache.disconnect();
    }
  });

  it("routes to subgraphs by the registry's variables", () => {
    const config = loadConfig(["subgraphs"], {
      NETWORKS_SUBGRAPH_URL: "http://n:1/graphql",
      RESULTS_SUBGRAPH_URL: "http://r:2/graphql",
      HISTORY_SUBGRAPH_URL: "",
    });
    expect(subgraphUrlOverrides(config)).toEqual({ networks: "http://n:1/graphql", results: "http://r:2/graphql" });
  });

  it("follows a schema registry only when SUPERGRAPH_URL is set, with its key in the named header", () => {
    const file = gatewaySettings(loadConfig(GATEWAY_SECTIONS, {}), { logger: silentLogger() });
    expect(file.supergraphRegistry).toBeUndefined();
    expect(file.routedSubgraphs).toEqual(["networks", "results", "history"]);
    const config = loadConfig(GATEWAY_SECTIONS, {
      SUPERGRAPH_URL: "https://cdn.example/artifacts/v1/supergraph",
      SUPERGRAPH_KEY: "k",
      SUPERGRAPH_KEY_HEADER: "Authorization",
      SUPERGRAPH_POLL_INTERVAL_MS: "2500",
      SUPERGRAPH_KEPT_PATH: "/var/lib/gateway/supergraph.graphql",
    });
    expect(gatewaySettings(config, { logger: silentLogger() }).supergraphRegistry).toEqual({
      url: "https://cdn.example/artifacts/v1/supergraph",
      key: { header: "Authorization", value: "k" },
      pollIntervalMs: 2500,
      keptPath: "/var/lib/gateway/supergraph.graphql",
    });
    expect(() => loadConfig(GATEWAY_SECTIONS, { SUPERGRAPH_URL: "file:///etc/passwd" })).toThrow(/SUPERGRAPH_URL: must be an http\(s\):\/\/ URL/);
  });
});

describe("realtimeSettings", () => {
  it("maps the REALTIME_* variables, the replay window deciding what pruning deletes", () => {
    const settings = realtimeSettings(
      loadConfig(["shared", ...REALTIME_SECTIONS], {
        TRUST_PROXY_HOPS: "1",
        REALTIME_MAX_MEMORY_MB: "512",
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
      admission: { maxSocketsPerAddress: 20, maxSocketsPerAddressCluster: 40, maxSockets: 10_000, maxMemoryBytes: 512 * 1024 * 1024 },
      firehose: { maxPerNode: 256, maxPerAddress: 8 },
      trustProxyHops: 1,
      replayDrainTimeoutMs: 10_000,
      replayPrepaidPages: 10,
      replayLane: { concurrency: 4, perClient: 1, queueTimeoutMs: 5000 },
      retention: { maxUpdates: 50, maxAgeMs: 60_000 },
      prune: { intervalMs: 0, batchSize: 1000, retention: { maxUpdates: 50, maxAgeMs: 60_000 } },
      pingIntervalMs: 25_000,
      pingTimeoutMs: 20_000,
      pollIntervalMs: 1000,
      feedTimeoutMs: 5000,
      drainGraceMs: 10_000,
    });
    expect(realtimeSettings(loadConfig(["shared", ...REALTIME_SECTIONS], {})).transports).toEqual(["polling", "websocket"]);
    expect(settings.replayBudget).toBeDefined();
    expect(realtimeSettings(loadConfig(["shared", ...REALTIME_SECTIONS], { REALTIME_REPLAY_PAGE_POINTS: "0" })).replayBudget).toBeUndefined();
    expect(realtimeSettings(loadConfig(["shared", ...REALTIME_SECTIONS], { RATE_LIMIT_POINTS: "0" })).replayBudget).toBeUndefined();
  });
});

describe("replayBudget", () => {
  it("charges replay pages to the budget a client's GraphQL requests pay from", async () => {
    // 6 000 points, 100 a replay page (the clock stands still: nothing refills).
    const config = loadConfig(["shared", ...REALTIME_SECTIONS], {
      RATE_LIMIT_POINTS: "6000",
      RATE_LIMIT_POINTS_INITIAL: "6000",
      REALTIME_REPLAY_PAGE_POINTS: "100",
    });
    const points = pointsStore(config)!;
    const replay = replayBudget(config, points)!;
    for (let page = 0; page < 55; page++) expect((await replay.take("127.0.0.9", 1_000)).allowed).toBe(true);
    // 5 500 spent on replays: a GraphQL request of 600 points no longer fits, one of 500 still does.
    expect((await points.take("127.0.0.9", 1_000, 600)).allowed).toBe(false);
    expect((await points.take("127.0.0.9", 1_000, 500)).allowed).toBe(true);
    expect((await replay.take("127.0.0.9", 1_000)).allowed).toBe(false);
    // Another client's budget is its own.
    expect((await replay.take("127.0.0.10", 1_000)).allowed).toBe(true);
  });

  it("refuses to start with a prepayment no budget can hold (every deep replay would be refused forever)", () => {
    const env = { RATE_LIMIT_POINTS: "5000", REALTIME_REPLAY_PAGE_POINTS: "600", REALTIME_REPLAY_PREPAID_PAGES: "10" };
    const config = loadConfig(["shared", ...REALTIME_SECTIONS], env);
    expect(() => replayBudget(config, pointsStore(config))).toThrow(/REALTIME_REPLAY_PREPAID_PAGES.*RATE_LIMIT_POINTS/s);
    const fits = loadConfig(["shared", ...REALTIME_SECTIONS], { ...env, REALTIME_REPLAY_PREPAID_PAGES: "8" });
    expect(replayBudget(fits, pointsStore(fits))).toBeDefined();
  });

  it("refuses a prepayment a new client's budget cannot hold (RATE_LIMIT_POINTS_INITIAL)", () => {
    const env = { RATE_LIMIT_POINTS: "10000", RATE_LIMIT_POINTS_INITIAL: "5000", REALTIME_REPLAY_PAGE_POINTS: "600", REALTIME_REPLAY_PREPAID_PAGES: "10" };
    const config = loadConfig(["shared", ...REALTIME_SECTIONS], env);
    expect(() => replayBudget(config, pointsStore(config))).toThrow(/REALTIME_REPLAY_PREPAID_PAGES.*must be at most RATE_LIMIT_POINTS_INITIAL \(5000\)/s);
    const fits = loadConfig(["shared", ...REALTIME_SECTIONS], { ...env, REALTIME_REPLAY_PREPAID_PAGES: "8" });
    expect(replayBudget(fits, pointsStore(fits))).toBeDefined();
  });

  it("gives back the prepaid pages a completed replay did not read", async () => {
    const config = loadConfig(["shared", ...REALTIME_SECTIONS], {
      RATE_LIMIT_POINTS: "6000",
      RATE_LIMIT_POINTS_INITIAL: "6000",
      REALTIME_REPLAY_PAGE_POINTS: "100",
    });
    const points = pointsStore(config)!;
    const replay = replayBudget(config, points)!;
    expect((await replay.take("127.0.0.11", 1_000, 10)).allowed).toBe(true);
    await replay.refund?.("127.0.0.11", 1_000, 9);
    expect((await points.take("127.0.0.11", 1_000, 0)).remaining).toBe(5_900);
  });
});

describe("cursorKeys", () => {
  const query = ["0xwallet", null, null, null, null, null, "DESC"];
  const sortKey = { placedBlock: 12n, logIndex: 3, chainId: 1n };
  const DATABASE_URL = "postgresql://bets_reader:reader@postgres:5432/bets";
  const keysOf = (env: Record<string, string>) => cursorKeys(loadConfig(["shared"], env));
  const issue = (env: Record<string, string>) => encodeCursor(queryFingerprints(query, keysOf(env))[0], sortKey);
  const accepts = (env: Record<string, string>, cursor: string) => {
    try {
      return decodeCursor(cursor, queryFingerprints(query, keysOf(env))) !== undefined;
    } catch {
      return false;
    }
  };

  it("in production never derives a key from DATABASE_URL, and names CURSOR_SECRET as missing", () => {
    expect(keysOf({ NODE_ENV: "production", DATABASE_URL })).toEqual({});
    expect(cursorSecretProblem(loadConfig(["shared"], { NODE_ENV: "production", DATABASE_URL }))).toMatch(/CURSOR_SECRET is required/);
    expect(cursorSecretProblem(loadConfig(["shared"], { NODE_ENV: "production", CURSOR_SECRET: "a secret of sixteen+" }))).toBeUndefined();
    // A cursor minted from the public connection string is not accepted by a production deployment.
    const minted = issue({ NODE_ENV: "development", DATABASE_URL });
    expect(accepts({ NODE_ENV: "development", DATABASE_URL }, minted)).toBe(true);
    expect(accepts({ NODE_ENV: "production", DATABASE_URL, CURSOR_SECRET: "the deployment's own secret" }, minted)).toBe(false);
  });

  it("rotates: CURSOR_SECRET_PREVIOUS accepts what the old secret signed until it is removed", () => {
    const old = { NODE_ENV: "production", CURSOR_SECRET: "the secret until today" };
    const rotating = { NODE_ENV: "production", CURSOR_SECRET: "the secret from today", CURSOR_SECRET_PREVIOUS: "the secret until today" };
    const rotated = { NODE_ENV: "production", CURSOR_SECRET: "the secret from today" };
    const published = issue(old);
    expect(accepts(rotating, published)).toBe(true);
    expect(accepts(rotated, published)).toBe(false);
    const fresh = issue(rotating);
    expect(accepts(rotated, fresh)).toBe(true);
    expect(accepts(old, fresh)).toBe(false);
  });
});

describe("stalledServerTimeout", () => {
  it("gives a stalled primary up 5 s past the statement timeout, never without one (core/db.ts stalledServerDeadline)", () => {
    expect(stalledServerTimeout(loadConfig(["shared"], {}))).toBe(10_000);
    expect(stalledServerTimeout(loadConfig(["shared"], { DATABASE_STATEMENT_TIMEOUT_MS: "1000" }))).toBe(6_000);
    expect(stalledServerTimeout(loadConfig(["shared"], { DATABASE_STATEMENT_TIMEOUT_MS: "0" }))).toBeUndefined();
    // A replica's margin is its connect timeout (core/read-replicas.ts): the read then falls back.
    expect(stalledServerDeadline(5_000, 1_000)).toBe(6_000);
    expect(stalledServerDeadline(0, 1_000)).toBeUndefined();
  });
});

describe("stopOnSignals", () => {
  it("exits 1 once the shutdown outlasts its deadline: a step that never ends cannot keep the process alive", async () => {
    vi.useFakeTimers();
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as () => never);
    const before = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
    const logged: string[] = [];
    const logger = createLogger({ name: "test", level: "info", destination: { write: (line: string) => logged.push(line) } });
    try {
      stopOnSignals(logger, () => new Promise<void>(() => undefined), 5_000);
      process.emit("SIGTERM", "SIGTERM");
      await vi.advanceTimersByTimeAsync(4_999);
      expect(exit).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(exit).toHaveBeenCalledWith(1);
      expect(logged.join("")).toContain("shutdown timed out");
    } finally {
      for (const signal of ["SIGINT", "SIGTERM"] as const)
        for (const listener of process.listeners(signal)) if (!before[signal].includes(listener)) process.off(signal, listener);
      exit.mockRestore();
      vi.useRealTimers();
    }
  });
});
