import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conventionViolations, startHttpTransportStack, startTestStack, type TestStack } from "../test/stack.ts";
import type { RunningStack } from "../bin/stack.ts";
import { createMemoryResponseCacheStore } from "./response-cache.ts";

// What an answer was read at (extensions.readAt, Query.readAt) and minBlock, through the gateway,
// on one database: the heads are the database's IndexingCursor rows, as written by the test.

interface Answer {
  status: number;
  retryAfter: string | null;
  xCache: string | null;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { readAt?: { chainId: number; block: string; hash: string }[] };
}

let t: TestStack;
let http: RunningStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 40 }, { responseCache: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 1024 * 1024 }) });
  http = await startHttpTransportStack(t, { production: false });
});
afterAll(async () => {
  await http?.stop();
  await t?.close();
});

const ask = async (query: string, variables: Record<string, unknown> = {}, url = t.url): Promise<Answer> => {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    xCache: response.headers.get("x-cache"),
    ...((await response.json()) as object),
  };
};

/** The heads as the database holds them, as answers say them. */
const heads = async () =>
  (await t.db.prisma.indexingCursor.findMany({ orderBy: { chainId: "asc" } })).map((cursor) => ({
    chainId: Number(cursor.chainId),
    block: cursor.indexedBlock.toString(),
    hash: cursor.indexedBlockHash,
  }));

const setHead = (chainId: number, block: bigint, hash: string) =>
  t.db.prisma.indexingCursor.update({ where: { chainId: BigInt(chainId) }, data: { indexedBlock: block, indexedBlockHash: hash } });

const HASH_A = `0x${"a".repeat(64)}`;

describe("readAt", () => {
  it("carries the heads the answer was read at, in extensions and as a field, as indexing.indexedBlock says them", async () => {
    const wallet = t.fixtures.whale;
    const sample = t.fixtures.sampleSettled!;
    for (const url of [t.url, http.url]) {
      const answer = await ask(
        `query ($w: Address!, $c: ChainId!, $b: UInt256!) {
          playerBets(wallet: $w, first: 2) { nodes { betId } }
          betResult(chainId: $c, betId: $b) { status result { won } }
          networkConfigs { chainId indexing { indexedBlock } }
          at: readAt { chainId block hash __typename }
        }`,
        { w: wallet, c: sample.chainId, b: sample.betId },
        url,
      );
      expect(answer.errors).toBeUndefined();
      const expected = await heads();
      expect(answer.extensions?.readAt).toEqual(expected);
      expect(answer.data!.at).toEqual(expected.map((head) => ({ ...head, __typename: "BlockPointer" })));
      expect(
        (answer.data!.networkConfigs as { chainId: number; indexing: { indexedBlock: string } }[]).map((n) => [n.chainId, n.indexing.indexedBlock]),
      ).toEqual(expected.map((head) => [head.chainId, head.block]));
      expect(conventionViolations(answer.data)).toEqual([]);
    }
  });

  it("says the new head once the indexer moved, and a cached answer the head it was computed at", async () => {
    const query = `{ networkConfigs { chainId name confirmations } }`;
    const first = await ask(query);
    const before = await heads();
    expect(first.extensions?.readAt).toEqual(before);
    const moved = BigInt(before[1]!.block) + 3n;
    await setHead(before[1]!.chainId, moved, HASH_A);
    const replayed = await ask(query);
    expect(replayed.xCache).toBe("HIT");
    expect(replayed.extensions?.readAt).toEqual(before);
    const fresh = await ask(`{ readAt { chainId block hash } }`);
    expect(fresh.data!.readAt).toEqual(await heads());
    expect(fresh.extensions?.readAt).toEqual(await heads());
    expect((fresh.data!.readAt as { block: string }[])[1]!.block).toBe(moved.toString());
  });
});

describe("minBlock", () => {
  it("answers a query whose minBlock every chain has reached, and says a head at or above it", async () => {
    const [, local] = await heads();
    const answer = await ask(`query ($w: Address!, $m: [MinBlock!]) { playerBets(wallet: $w, first: 1, minBlock: $m) { totalCount } }`, {
      w: t.fixtures.whale,
      m: [{ chainId: local!.chainId, block: local!.block }],
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.playerBets).toEqual({ totalCount: expect.any(Number) });
    expect(answer.extensions?.readAt?.find((head) => head.chainId === local!.chainId)?.block).toBe(local!.block);
  });

  it("refuses a minBlock above the indexed head with NOT_YET_INDEXED, the head and a retry hint, and no data", async () => {
    const [, local] = await heads();
    const above = (BigInt(local!.block) + 1n).toString();
    for (const url of [t.url, http.url]) {
      for (const query of [
        `query ($m: [MinBlock!]) { bets(first: 1, minBlock: $m) { nodes { betId } } }`,
        `query ($m: [MinBlock!]) { betResults(chainId: ${local!.chainId}, betIds: ["1"], minBlock: $m) { betId } }`,
      ]) {
        const answer = await ask(query, { m: [{ chainId: local!.chainId, block: above }] }, url);
        expect(answer.data ?? null).toBeNull();
        expect(answer.errors?.[0]?.extensions).toMatchObject({
          code: "NOT_YET_INDEXED",
          chainId: local!.chainId,
          minBlock: above,
          indexedBlock: local!.block,
          retryAfterSeconds: expect.any(Number),
        });
        expect(answer.retryAfter).toBe(String(answer.errors![0]!.extensions!.retryAfterSeconds));
      }
    }
  });

  it("holds every subgraph call of the request to the minBlock of one field (the networks subgraph refuses too)", async () => {
    const [, local] = await heads();
    const above = (BigInt(local!.block) + 1n).toString();
    const query = `query ($c: ChainId!, $m: [MinBlock!]) { betResult(chainId: $c, betId: "1", minBlock: $m) { betId } networkConfigs { name } }`;
    // Without the minimum reaching it, networkConfigs would answer (and betResult, nullable, be null beside it).
    const refused = await ask(query, { c: local!.chainId, m: [{ chainId: local!.chainId, block: above }] });
    expect(refused.data ?? null).toBeNull();
    expect(new Set(refused.errors?.map((error) => error.extensions?.code))).toEqual(new Set(["NOT_YET_INDEXED"]));
    const answered = await ask(query, { c: local!.chainId, m: [{ chainId: local!.chainId, block: local!.block }] });
    expect(answered.errors).toBeUndefined();
    expect((answered.data!.networkConfigs as unknown[]).length).toBeGreaterThan(0);
  });

  it("refuses a minBlock on an unknown chain as BAD_USER_INPUT", async () => {
    const answer = await ask(`{ bets(first: 1, minBlock: [{ chainId: 5, block: "1" }]) { totalCount } }`);
    expect(answer.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("refuses more than 16 minBlock entries as BAD_USER_INPUT naming minBlock, and takes 16", async () => {
    const entries = (n: number) => Array.from({ length: n }, () => ({ chainId: 31337, block: "1" }));
    const query = `query ($m: [MinBlock!]) { bets(first: 1, minBlock: $m) { totalCount } }`;
    const refused = await ask(query, { m: entries(17) });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "minBlock" });
    expect((await ask(query, { m: entries(16) })).errors).toBeUndefined();
  });
});
