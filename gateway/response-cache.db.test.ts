import { createHash } from "node:crypto";
import { ApolloServer } from "@apollo/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { ask, FINAL_BET, finalizedSettledBetIds } from "../test/cache-answers.ts";
import { eventually } from "../test/eventually.ts";
import { IndexerStore } from "../indexer/store.ts";
import { withoutCostExtension } from "./points-budget.ts";
import { createMemoryResponseCacheStore } from "./response-cache.ts";

// The gateway's whole-response cache, in process: a finalized bet's answer is served again without
// reaching any subgraph (no SQL at all); what moves with the head, health, errors and partial data
// are never served from it. Redis sharing and Redis faults: response-cache-redis.db.test.ts.

const statements: string[] = [];
/** The statements sent since the last reset, without the cache's data generation poll (every 2 s, whatever is asked). */
const served = () => statements.filter((sql) => !sql.includes('"IndexingCursor"'));
let t: TestStack;
let finalIds: string[];
beforeAll(async () => {
  t = await startTestStack(
    { bets: 120 },
    {
      onQuery: (sql) => statements.push(sql),
      networkTtlMs: 600_000,
      responseCache: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 16 * 1024 * 1024 }),
    },
  );
  finalIds = await finalizedSettledBetIds(t.url);
});
afterAll(async () => {
  await t?.close();
});

describe("response cache (in process)", () => {
  it("serves a finalized settled bet's second request from the cache, reaching no subgraph", async () => {
    const betId = finalIds[0]!;
    statements.length = 0;
    const first = await ask(t.url, FINAL_BET, { betId });
    expect(first.body.errors).toBeUndefined();
    expect(first).toMatchObject({ status: 200, xCache: "MISS", cacheControl: "max-age=3600, public" });
    expect(statements.filter((sql) => sql.includes('"BetResult"')).length).toBeGreaterThan(0);

    statements.length = 0;
    const second = await ask(t.url, FINAL_BET, { betId });
    expect(second).toMatchObject({ status: 200, xCache: "HIT", cacheControl: "max-age=3600, public" });
    expect(Number(second.age)).toBeGreaterThanOrEqual(0);
    expect(second.text).toBe(withoutCostExtension(first.text));
    expect(served()).toEqual([]);

    // Other variables are another entry.
    const other = await ask(t.url, FINAL_BET, { betId: finalIds[1]! });
    expect(other.xCache).toBe("MISS");
    expect(other.text).not.toBe(first.text);
  });

  it("replays a hit before any Apollo Server is entered: the miss's bytes and headers (gateway/response-replay.ts)", async () => {
    const betId = finalIds[5]!;
    const post = () =>
      fetch(`${t.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "accept-encoding": "identity" },
        body: JSON.stringify({ query: FINAL_BET, variables: { betId } }),
      });
    const lasting = (headers: Headers) =>
      Object.fromEntries(
        [...headers].filter(([name]) => !["date", "x-request-id", "x-cache", "age", "connection", "keep-alive", "content-length"].includes(name)),
      );
    const entered = vi.spyOn(ApolloServer.prototype, "executeHTTPGraphQLRequest");
    try {
      const miss = await post();
      const missText = await miss.text();
      expect(miss.headers.get("x-cache")).toBe("MISS");
      expect(entered).toHaveBeenCalled(); // the gateway's and the subgraphs'
      entered.mockClear();
      const hit = await post();
      expect(hit.headers.get("x-cache")).toBe("HIT");
      // The miss's bytes without its own cost (gateway/points-budget.ts): shorter by that, so content-length is per answer too.
      expect(await hit.text()).toBe(withoutCostExtension(missText));
      expect(lasting(hit.headers)).toEqual(lasting(miss.headers));
      expect(entered).not.toHaveBeenCalled();
    } finally {
      entered.mockRestore();
    }
  });

  it("keys on the query text: a GET, and an APQ hash-only GET, hit what a POST stored", async () => {
    const betId = finalIds[3]!;
    const posted = await ask(t.url, FINAL_BET, { betId });
    expect(posted.xCache).toBe("MISS");
    const sha256Hash = createHash("sha256").update(FINAL_BET).digest("hex");
    const get = async (withQuery: boolean) => {
      const params = new URLSearchParams({ variables: JSON.stringify({ betId }), extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash } }) });
      if (withQuery) params.set("query", FINAL_BET);
      const response = await fetch(`${t.url}/graphql?${params}`);
      return { xCache: response.headers.get("x-cache"), text: await response.text() };
    };
    statements.length = 0;
    expect(await get(true)).toEqual({ xCache: "HIT", text: withoutCostExtension(posted.text) }); // registers the hash
    expect(await get(false)).toEqual({ xCache: "HIT", text: withoutCostExtension(posted.text) });
    expect(served()).toEqual([]);
  });

  it("serves betResults over every finalized settled bet from the cache", async () => {
    expect(finalIds.length).toBeGreaterThanOrEqual(10);
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId player status result { outcome payout proof { piA verified } } } }`;
    const first = await ask(t.url, query, { ids: finalIds });
    expect(first).toMatchObject({ status: 200, xCache: "MISS", cacheControl: "max-age=3600, public" });
    statements.length = 0;
    const second = await ask(t.url, query, { ids: finalIds });
    expect(second).toMatchObject({ status: 200, xCache: "HIT" });
    expect(second.text).toBe(withoutCostExtension(first.text));
    expect(served()).toEqual([]);
  });

  it("never serves a pending bet from the cache: its change shows at once", async () => {
    const pending = await t.db.prisma.bet.findFirstOrThrow({ where: { status: "PENDING", chainId: 31337n }, orderBy: { placedBlock: "desc" } });
    const betId = pending.betId.toFixed(0);
    const query = `query ($betId: UInt256!) { betResult(chainId: 31337, betId: $betId) { betId status refundedBlock } }`;
    const first = await ask(t.url, query, { betId });
    expect(first).toMatchObject({ xCache: "MISS", cacheControl: "max-age=2, public" });
    expect(first.body.data!.betResult).toMatchObject({ status: "PENDING", refundedBlock: null });

    statements.length = 0;
    expect((await ask(t.url, query, { betId })).xCache).toBe("MISS");
    expect(statements.length).toBeGreaterThan(0);

    const refundedBlock = pending.placedBlock + 1n;
    await t.db.prisma.bet.update({
      where: { chainId_betId: { chainId: pending.chainId, betId: pending.betId } },
      data: {
        status: "REFUNDED",
        refundedBlock,
        refundedBlockHash: `0x${"ab".repeat(32)}`,
        refundedTx: `0x${"cd".repeat(32)}`,
        refundedAt: pending.placedAt + 12n,
        lastChangeBlock: refundedBlock,
      },
    });
    const after = await ask(t.url, query, { betId });
    expect(after.xCache).toBe("MISS");
    expect(after.body.data!.betResult).toMatchObject({ status: "REFUNDED", refundedBlock: refundedBlock.toString() });
  });

  it("counts hits, stores and misses in /metrics", async () => {
    const counts = async () => {
      const text = await (await fetch(`${t.url}/metrics`)).text();
      const count = (result: string) =>
        Number(text.match(new RegExp(`^graphql_response_cache_total\\{[^}]*result="${result}"[^}]*\\} (\\d+)$`, "m"))?.[1] ?? 0);
      return { hit: count("hit"), stored: count("stored"), miss: count("miss") };
    };
    const before = await counts();
    expect((await ask(t.url, FINAL_BET, { betId: finalIds[4]! })).xCache).toBe("MISS");
    expect((await ask(t.url, FINAL_BET, { betId: finalIds[4]! })).xCache).toBe("HIT");
    expect((await ask(t.url, `{ health { status } }`)).xCache).toBe("MISS");
    expect(await counts()).toEqual({ hit: before.hit + 1, stored: before.stored + 1, miss: before.miss + 1 });
  });

  it("keeps network settings a minute, but never anything that asks for health", async () => {
    const settings = `{ networkConfigs { chainId name confirmations } }`;
    expect((await ask(t.url, settings)).xCache).toBe("MISS");
    expect(await ask(t.url, settings)).toMatchObject({ xCache: "HIT", cacheControl: "max-age=60, public" });

    for (const query of [
      `{ health { status } networkConfigs { chainId name } }`,
      `query { ...Both } fragment Both on Query { health { status } networkConfigs { chainId } }`,
    ]) {
      const first = await ask(t.url, query);
      const second = await ask(t.url, query);
      expect([first.xCache, second.xCache, second.cacheControl]).toEqual(["MISS", "MISS", "no-store"]);
    }
  });
});

// A stack of its own: it rewrites network 31337.
describe("response cache and an indexer reset", () => {
  let own: TestStack;
  beforeAll(async () => {
    own = await startTestStack(
      { bets: 120 },
      {
        responseCache: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 16 * 1024 * 1024 }),
        responseCacheGenerationPollMs: 100,
      },
    );
  });
  afterAll(async () => {
    await own?.close();
  });

  it("makes every stored answer unreachable once the indexer resets a network, finalized or not", async () => {
    const betId = (await finalizedSettledBetIds(own.url))[0]!;
    const first = await ask(own.url, FINAL_BET, { betId });
    expect(first).toMatchObject({ xCache: "MISS", body: { data: { betResult: { betId } } } });
    expect((await ask(own.url, FINAL_BET, { betId })).xCache).toBe("HIT");

    // What the indexer does when the chain no longer holds what it indexed, or the contract was redeployed.
    const removed = await new IndexerStore(own.db).reset(31337, 0n, {
      chainId: 31337,
      name: "localnet",
      confirmations: 2,
      headBlock: null,
      finalizedBlock: null,
    });
    expect(removed).toBeGreaterThan(0);
    let after: Awaited<ReturnType<typeof ask>> | undefined;
    await eventually(
      async () => {
        after = await ask(own.url, FINAL_BET, { betId });
        return after.xCache !== "HIT";
      },
      10_000,
      "a miss after the reset",
      50,
    );
    expect(after).toMatchObject({ status: 200, xCache: "MISS", body: { data: { betResult: null } } });
  });
});

// Last: it stops the history subgraph of this file's stack.
describe("response cache and partial data", () => {
  it("never stores partial data, though what did arrive may be kept a minute", async () => {
    await t.stack.subgraphs.history!.stop();
    const query = `query ($betId: UInt256!) { networkConfigs { chainId name } betResult(chainId: 31337, betId: $betId) { betId player result { outcome } } }`;
    const betId = finalIds[2]!;
    for (let i = 0; i < 2; i++) {
      const answer = await ask(t.url, query, { betId });
      expect(answer.status).toBe(200);
      expect(answer.body.errors?.[0]?.extensions?.code).toBe("SERVICE_UNAVAILABLE");
      expect(answer.body.data?.networkConfigs).toHaveLength(2);
      expect(answer.xCache).toBe("MISS");
    }
  });
});
