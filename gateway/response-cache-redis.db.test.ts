import { HeaderMap, type HTTPGraphQLRequest } from "@apollo/server";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { ask, FINAL_BET, finalizedSettledBetIds } from "../test/cache-answers.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { startTestStack, testGatewaySettings, type TestStack } from "../test/stack.ts";
import { withoutCostExtension } from "./points-budget.ts";
import { RedisResponseCacheStore, type ResponseCacheStore } from "./response-cache.ts";
import { createResponseReplay } from "./response-replay.ts";
import { createGateway, type Gateway } from "./server.ts";
import { testConfig } from "../test/config.ts";
import { describeWith, privateRedisServer, redisService } from "../test/services.ts";

// The response cache in Redis: one gateway's answer is another's hit (the shared Redis at
// 127.0.0.1:6379, under a prefix of this test's own), and a Redis that dies, comes back or hangs
// (a private redis-server) never costs a client more than the cache.

const statements: string[] = [];
const prefix = `test:responsecache:${process.pid}:${Math.random().toString(36).slice(2)}:`;
const shared = new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
let t: TestStack;
let finalIds: string[];
const extra: { gateway: Gateway; url: string }[] = [];
let privateRedis: PrivateRedis | undefined;
let privateClient: Redis | undefined;

/** Another gateway over this stack's subgraphs, with its own response cache store. */
async function anotherGateway(responseCache: ResponseCacheStore): Promise<string> {
  const gateway = createGateway({ db: t.db, logger: silentLogger(), ...testGatewaySettings({ subgraphUrls: t.stack.subgraphUrls, responseCache }) });
  const { url } = await gateway.listen("127.0.0.1", 0);
  extra.push({ gateway, url });
  return url;
}

// The shared Redis and a redis-server binary of its own: without them (not under CI) the suite is
// skipped, its title saying SKIPPED and how to install them.
const redisServer = await redisService();
const redisBinary = privateRedisServer;

describeWith([redisServer, redisBinary], "response cache in Redis", () => {
  beforeAll(async () => {
    t = await startTestStack(
      { bets: 120 },
      {
        onQuery: (sql) => statements.push(sql),
        networkTtlMs: 600_000,
        responseCache: new RedisResponseCacheStore(shared, { logger: silentLogger(), prefix }),
      },
    );
    finalIds = await finalizedSettledBetIds(t.url);
  });
  afterAll(async () => {
    for (const { gateway } of extra) await gateway.stop();
    await t?.close();
    const keys = await shared.keys(`${prefix}*`);
    if (keys.length > 0) await shared.del(...keys);
    shared.disconnect();
    privateClient?.disconnect();
    await privateRedis?.stop();
  });

  it("is shared: an answer computed by gateway A is a hit on gateway B, which reaches no subgraph", async () => {
    const gatewayB = await anotherGateway(new RedisResponseCacheStore(new Redis(shared.options), { logger: silentLogger(), prefix }));
    const betId = finalIds[0]!;
    const onA = await ask(t.url, FINAL_BET, { betId });
    expect(onA).toMatchObject({ status: 200, xCache: "MISS", cacheControl: "max-age=3600, public" });
    // The answer's bytes (gateway/response-replay.ts) are written in the background of the answer,
    // once (no second copy in another form), and live as long as the answer's maxAge.
    await eventually(async () => (await shared.keys(`${prefix}*`)).length === 2, 5_000, "the entry in Redis");
    const keys = (await shared.keys(`${prefix}*`)).map((key) => key.slice(prefix.length));
    // Its header and the bytes it names, both living as long as the answer's maxAge.
    expect(keys.map((key) => key.split(":")[0]).sort()).toEqual(["body", "head"]);
    for (const key of keys) {
      const ttl = await shared.ttl(prefix + key);
      expect(ttl).toBeGreaterThan(3500);
      expect(ttl).toBeLessThanOrEqual(3600);
    }

    statements.length = 0;
    const onB = await ask(gatewayB, FINAL_BET, { betId });
    expect(onB).toMatchObject({ status: 200, xCache: "HIT", cacheControl: "max-age=3600, public" });
    expect(onB.text).toBe(withoutCostExtension(onA.text)); // A's bytes without A's own cost (gateway/points-budget.ts)
    expect(statements).toEqual([]);
    // Still one entry: a hit writes none.
    expect(await shared.keys(`${prefix}*`)).toHaveLength(2);
  });

  it("serves uncached, correct answers while Redis is down or hung, and logs each change of state once", async () => {
    privateRedis = await createPrivateRedis();
    privateClient = new Redis(privateRedis.url, { maxRetriesPerRequest: 1 });
    privateClient.on("error", () => undefined); // the store reports Redis failures itself
    await eventually(() => privateClient!.status === "ready", 10_000, "the private redis");
    const lines: { msg: string; level: number }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; level: number }) });
    const gateway = await anotherGateway(new RedisResponseCacheStore(privateClient, { logger, prefix }));
    const betId = finalIds[1]!;
    const logged = (text: string) => lines.filter((line) => line.msg.includes(text)).length;

    const first = await ask(gateway, FINAL_BET, { betId });
    expect(first.xCache).toBe("MISS");
    await eventually(async () => (await ask(gateway, FINAL_BET, { betId })).xCache === "HIT", 5_000, "a hit through the private redis");

    await privateRedis.stop();
    await eventually(() => privateClient!.status !== "ready", 10_000, "the client to notice");
    for (let i = 0; i < 3; i++) {
      const down = await ask(gateway, FINAL_BET, { betId });
      expect(down).toMatchObject({ status: 200, xCache: "MISS" });
      expect(down.text).toBe(first.text);
    }
    expect(logged("redis unavailable")).toBe(1);

    await privateRedis.start();
    await eventually(() => privateClient!.status === "ready", 20_000, "the client to reconnect");
    expect((await ask(gateway, FINAL_BET, { betId })).xCache).toBe("MISS"); // a fresh, empty Redis
    await eventually(async () => (await ask(gateway, FINAL_BET, { betId })).xCache === "HIT", 5_000, "a hit after the restart");
    expect(logged("redis available again")).toBe(1);

    // A hung Redis keeps its connection open and answers nothing: each request waits at most the
    // store's timeout, then goes on uncached.
    privateRedis.freeze();
    try {
      const started = performance.now();
      const hung = await ask(gateway, FINAL_BET, { betId });
      expect(hung).toMatchObject({ status: 200, xCache: "MISS" });
      expect(hung.text).toBe(first.text);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(logged("redis unavailable")).toBe(2);
    } finally {
      privateRedis.thaw();
    }
  });
});

// The shipped redis-cache evicts allkeys-lru (docker-compose.yml): a hot answer must outlive a
// cold one, though a gateway that has decoded it reads only its header (the bytes are touched).
describeWith(redisBinary, "response cache in a full Redis with allkeys-lru", () => {
  let lru: PrivateRedis;
  let client: Redis;
  beforeAll(async () => {
    lru = await createPrivateRedis({ args: ["--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "10"] });
    client = new Redis(lru.url, { maxRetriesPerRequest: 1 });
    await client.ping();
  });
  afterAll(async () => {
    client?.disconnect();
    await lru?.stop();
  });

  it("evicts the least recently used answer, not the bytes of the one every hit reads", { timeout: 30_000 }, async () => {
    const store = new RedisResponseCacheStore(client, { logger: silentLogger(), prefix: "rc:", timeoutMs: 2_000 });
    const at = Date.now();
    const gateway = () => createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }) });
    const page = (id: string): HTTPGraphQLRequest => ({
      method: "POST",
      headers: new HeaderMap(),
      search: "",
      body: { query: FINAL_BET, variables: { betId: id } },
    });
    const one = gateway();
    const big = (c: string) => `{"data":"${c.repeat(150_000)}"}`;
    const put = async (id: string, body: string) => {
      const miss = page(id);
      expect(await one.answer(miss)).toBeUndefined();
      one.answered?.(miss, { status: 200, headers: [["content-type", "application/json"]], body }, undefined, "graphql");
      await eventually(async () => (await one.answer(page(id))) !== undefined, 5_000, `answer ${id} stored`);
    };
    const hit = async (replay: ReturnType<typeof gateway>, id: string) => (await replay.answer(page(id)))?.body.toString();
    await put("1", big("a"));
    // Redis's LRU clock counts seconds: the cold answer is written over a second after the hot one.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await put("2", big("b")); // cold: never asked again
    for (let i = 0; i < 25; i++) {
      expect(await hit(one, "1")).toBe(big("a")); // hot, from this gateway's memory
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await put("3", big("c"));
    // Full: room for all but ~100 KB, so one key goes.
    const used = Number(/used_memory:(\d+)/.exec(await client.info("memory"))?.[1]);
    await client.config("SET", "maxmemory", String(used - 100_000));
    await client.ping();
    expect(await client.dbsize()).toBeLessThan(6);
    // A replica (or this gateway restarted) still finds the hottest answer.
    expect(await hit(gateway(), "1")).toBe(big("a"));
  });
});
