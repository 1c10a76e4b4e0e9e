// The client's paging, retries, minBlock and hash-only GETs against the real gateway on the fixture set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { createGraphQLClient, GraphQLRequestError } from "./graphql.ts";
import { networksQuery, playerBetsPageQuery } from "./operations.ts";
import { betsPages, createPager, pageThrough, playerBetsPages } from "./pages.ts";

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
});
afterAll(async () => {
  await t?.close();
});

describe("paging", () => {
  it("walks a wallet's whole filtered history page by page: no duplicate, no gap against a direct count", async () => {
    const client = createGraphQLClient({ url: `${t.url}/graphql` });
    const wallet = t.fixtures.whale.toLowerCase();
    const ids: string[] = [];
    for await (const page of pageThrough(client, playerBetsPages({ wallet, filter: { status: ["SETTLED"] }, first: 7 }))) {
      ids.push(...page.nodes.map((bet) => `${bet.chainId}:${bet.betId}`));
      expect(page.nodes.every((bet) => bet.status === "SETTLED" && bet.player === wallet)).toBe(true);
    }
    const expected = await t.db.prisma.bet.findMany({ where: { player: wallet, status: "SETTLED" }, select: { chainId: true, betId: true } });
    expect(expected.length).toBeGreaterThan(7);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(expected.map((bet) => `${bet.chainId}:${bet.betId.toFixed(0)}`).sort());
  });

  it("loads more on demand until the last page (bets, the explorer, filtered by chain)", async () => {
    const client = createGraphQLClient({ url: `${t.url}/graphql` });
    const pager = createPager(client, betsPages({ filter: { chainId: 31337 }, first: 25 }));
    let calls = 0;
    while (pager.getSnapshot().hasMore) {
      await pager.loadMore();
      calls++;
    }
    const { items, totalCount, error } = pager.getSnapshot();
    expect(error).toBeUndefined();
    const direct = await t.db.prisma.bet.count({ where: { chainId: 31337n } });
    expect(items).toHaveLength(direct);
    expect(totalCount).toBe(direct);
    expect(new Set(items.map((bet) => bet.betId)).size).toBe(direct);
    expect(calls).toBe(Math.ceil(direct / 25));
  });
});

describe("retries and minBlock", () => {
  it("retries NOT_YET_INDEXED after the wait the server names, and answers once the block is indexed", async () => {
    const cursor = await t.db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } });
    const waits: number[] = [];
    const client = createGraphQLClient({
      url: `${t.url}/graphql`,
      // The "indexer" indexes the block while the client waits.
      sleep: async (ms) => {
        waits.push(ms);
        await t.db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { indexedBlock: { increment: 1 } } });
      },
    });
    const minBlock = [{ chainId: 31337, block: (cursor.indexedBlock + 1n).toString() }];
    const answer = await client.requestWithMeta(playerBetsPageQuery, { wallet: t.fixtures.whale, first: 1, minBlock });
    expect(answer.data.playerBets.nodes).toHaveLength(1);
    expect(waits).toEqual([2_000]); // the retryAfterSeconds (and Retry-After) of NOT_YET_INDEXED
    expect(answer.readAt.find((head) => head.chainId === 31337)?.block).toBe((cursor.indexedBlock + 1n).toString());
  });

  it("gives up with the error when retries are off, or the wait is longer than allowed", async () => {
    const cursor = await t.db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } });
    const minBlock = [{ chainId: 31337, block: (cursor.indexedBlock + 100n).toString() }];
    for (const client of [
      createGraphQLClient({ url: `${t.url}/graphql`, retry: false }),
      createGraphQLClient({ url: `${t.url}/graphql`, retry: { maxDelayMs: 1_000 } }),
    ]) {
      const failure = await client.request(playerBetsPageQuery, { wallet: t.fixtures.whale, first: 1, minBlock }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GraphQLRequestError);
      expect((failure as GraphQLRequestError).code).toBe("NOT_YET_INDEXED");
    }
  });
});

describe("persisted queries", () => {
  it("sends a hash-only GET, falls back to the text once, and is answered by hash afterwards", async () => {
    const requests: { method: string; hasQuery: boolean }[] = [];
    const client = createGraphQLClient({
      url: `${t.url}/graphql`,
      persistedQueries: true,
      fetch: async (input, init) => {
        const url = String(input);
        requests.push({ method: init?.method ?? "GET", hasQuery: url.includes("query=") || String(init?.body ?? "").includes('"query"') });
        return fetch(input, init);
      },
    });
    const first = await client.request(networksQuery);
    const second = await client.request(networksQuery);
    expect(second).toEqual(first);
    expect(requests).toEqual([
      { method: "GET", hasQuery: false },
      { method: "POST", hasQuery: true },
      { method: "GET", hasQuery: false },
    ]);
  });
});
