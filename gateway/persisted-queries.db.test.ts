import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { guardRedis } from "../core/redis.ts";
import { testConfig } from "../test/config.ts";
import { describeWith, redisService } from "../test/services.ts";
import { startTestStack, testGatewaySettings, type TestStack } from "../test/stack.ts";
import { createRedisPersistedQueryStore } from "./persisted-queries.ts";
import { createGateway, type Gateway } from "./server.ts";

// Automatic persisted queries behind two gateways sharing one Redis (127.0.0.1:6379, under a
// prefix of this test's own): a hash registered through gateway A answers a hash-only GET on
// gateway B; the store keeps at most its bound of queries.

const prefix = `test:apq:${process.pid}:${Math.random().toString(36).slice(2)}:`;
const shared = new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
const redisServer = await redisService();
let t: TestStack;
const gateways: Gateway[] = [];

/** A gateway over the test stack's subgraphs; `store`: share the Redis store (else Apollo's in-process one). */
async function gateway(store: "redis" | "own", maxEntries = 100): Promise<string> {
  const persistedQueries =
    store === "redis"
      ? createRedisPersistedQueryStore(guardRedis(new Redis(testConfig.TEST_REDIS_URL, { maxRetriesPerRequest: 1 }), { timeoutMs: 500 }), {
          prefix,
          maxEntries,
          ttlSeconds: 60,
          maxQueryBytes: 65_536,
          logger: silentLogger(),
        })
      : undefined;
  const created = createGateway({ db: t.db, logger: silentLogger(), ...testGatewaySettings({ subgraphUrls: t.stack.subgraphUrls, persistedQueries }) });
  gateways.push(created);
  return (await created.listen("127.0.0.1", 0)).url;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const extensionsOf = (query: string) => JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

/** Registers `query` through `url` (hash and text, POST). */
async function register(url: string, query: string): Promise<void> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, extensions: JSON.parse(extensionsOf(query)) }),
  });
  const body = (await response.json()) as { errors?: unknown[] };
  expect(body.errors).toBeUndefined();
}

/** A hash-only GET of `query` on `url`: the data, or the error code. */
async function hashOnly(url: string, query: string): Promise<{ data?: unknown; code?: unknown }> {
  const response = await fetch(`${url}/graphql?extensions=${encodeURIComponent(extensionsOf(query))}`, { headers: { "apollo-require-preflight": "1" } });
  const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
  return body.errors ? { code: body.errors[0]?.extensions?.code } : { data: body.data };
}

describeWith(redisServer, "persisted queries shared by the gateways through Redis", () => {
  beforeAll(async () => {
    await shared.connect();
    t = await startTestStack({ bets: 10 });
  });
  afterAll(async () => {
    for (const each of gateways) await each.stop();
    await t?.close();
    const keys = await shared.keys(`${prefix}*`);
    if (keys.length > 0) await shared.del(...keys);
    shared.disconnect();
  });

  it("answers on gateway B a hash-only GET registered through gateway A", async () => {
    const [a, b] = [await gateway("redis"), await gateway("redis")];
    const query = `{ networkConfigs { chainId name } }`;
    expect(await hashOnly(b, query)).toEqual({ code: "PERSISTED_QUERY_NOT_FOUND" });
    await register(a, query);
    expect(await hashOnly(b, query)).toEqual({
      data: { networkConfigs: [expect.objectContaining({ chainId: 1337 }), expect.objectContaining({ chainId: 31337 })] },
    });
  });

  it("is per process without the shared store (what the shared store fixes)", async () => {
    const [a, b] = [await gateway("own"), await gateway("own")];
    const query = `{ networkConfigs { name } }`;
    await register(a, query);
    expect(await hashOnly(a, query)).toMatchObject({ data: expect.anything() });
    expect(await hashOnly(b, query)).toEqual({ code: "PERSISTED_QUERY_NOT_FOUND" });
  });

  it("keeps at most its bound of queries, dropping the oldest registrations", async () => {
    const [a, b] = [await gateway("redis", 2), await gateway("redis", 2)];
    const queries = ["chainId", "name", "confirmations"].map((field) => `{ networkConfigs { ${field} __typename } }`);
    for (const query of queries) await register(a, query);
    expect(await hashOnly(b, queries[0]!)).toEqual({ code: "PERSISTED_QUERY_NOT_FOUND" });
    for (const query of queries.slice(1)) expect(await hashOnly(b, query)).toMatchObject({ data: expect.anything() });
    expect(await shared.zcard(`${prefix}index`)).toBe(2);
  });
});
