import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// Keyset pagination through 1 000 bets of one wallet: every page in order, no duplicate, no gap,
// across two chains whose (placedBlock, logIndex) pairs collide, in both directions and with filters.

interface Page {
  playerBets: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: { chainId: number; betId: string; placedBlock: string; status: string; game: string; placedAt: string } }[];
  };
}

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 1400, whaleShare: 0.72, provenLimit: 5, outbox: false });
});
afterAll(async () => {
  await t?.close();
});

async function walk(filterArgs: string, direction: "ASC" | "DESC", pageSize: number) {
  const seen: Page["playerBets"]["edges"][number]["node"][] = [];
  let after: string | null = null;
  let pages = 0;
  let total = -1;
  for (;;) {
    const response: { data?: Page | null; errors?: unknown } = await t.gql<Page>(
      `query ($w: Address!, $after: String, $first: Int!) {
        playerBets(wallet: $w, first: $first, after: $after, orderDirection: ${direction} ${filterArgs}) {
          totalCount pageInfo { hasNextPage endCursor } edges { cursor node { chainId betId placedBlock status game placedAt } } } }`,
      { w: t.fixtures.whale, after, first: pageSize },
    );
    expect(response.errors).toBeUndefined();
    const page = response.data!.playerBets;
    total = page.totalCount;
    seen.push(...page.edges.map((e) => e.node));
    pages++;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
    expect(pages).toBeLessThan(200);
  }
  return { seen, total, pages };
}

async function expectedOrder(where: Record<string, unknown>, direction: "asc" | "desc") {
  const rows = await t.db.prisma.bet.findMany({
    where: { player: t.fixtures.whale, ...where },
    orderBy: [{ placedBlock: direction }, { placedLogIndex: direction }, { chainId: direction }],
    select: { chainId: true, betId: true },
  });
  return rows.map((r) => `${r.chainId}:${r.betId.toFixed(0)}`);
}

describe("playerBets keyset pagination", () => {
  it("has at least 1 000 bets for the wallet, on both chains, with colliding sort keys", async () => {
    const count = await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } });
    expect(count).toBeGreaterThanOrEqual(1000);
    const collisions = await t.db.prisma.$queryRaw<[{ n: number }]>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM "Bet" WHERE "player" = ${t.fixtures.whale}
      GROUP BY "placedBlock", "placedLogIndex" HAVING count(*) > 1) pairs`;
    expect(collisions[0].n).toBeGreaterThan(0);
  });

  it.each([
    ["DESC", 37],
    ["ASC", 100],
  ] as const)("walks every bet %s in pages of %d without duplicate or gap", async (direction, pageSize) => {
    const { seen, total } = await walk("", direction, pageSize);
    const keys = seen.map((b) => `${b.chainId}:${b.betId}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(await expectedOrder({}, direction === "DESC" ? "desc" : "asc"));
    expect(total).toBe(keys.length);
  });

  it("breaks ties between chains the same way on one-row pages", async () => {
    const expected = (await expectedOrder({}, "desc")).slice(0, 60);
    const seen: string[] = [];
    let after: string | null = null;
    while (seen.length < expected.length) {
      const response: { data?: Page | null } = await t.gql<Page>(
        `query ($w: Address!, $after: String) { playerBets(wallet: $w, first: 1, after: $after) {
          totalCount pageInfo { hasNextPage endCursor } edges { cursor node { chainId betId placedBlock status game placedAt } } } }`,
        { w: t.fixtures.whale, after },
      );
      const page: Page["playerBets"] = response.data!.playerBets;
      seen.push(...page.edges.map((e) => `${e.node.chainId}:${e.node.betId}`));
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
  });

  it("applies every filter consistently across pages and in totalCount", async () => {
    const fromTo = await t.db.prisma.bet.aggregate({ where: { player: t.fixtures.whale }, _min: { placedAt: true }, _max: { placedAt: true } });
    const from = fromTo._min.placedAt! + 100n;
    const to = fromTo._max.placedAt! - 100n;
    const filter = `filter: { chainId: 31337, status: [SETTLED, PENDING], game: "dice", placedFrom: "${from}", placedTo: "${to}" }`;
    const { seen, total } = await walk(filter, "DESC", 50);
    const expected = await expectedOrder({ chainId: 31337n, status: { in: ["SETTLED", "PENDING"] }, game: "dice", placedAt: { gte: from, lt: to } }, "desc");
    expect(expected.length).toBeGreaterThan(50);
    expect(seen.map((b) => `${b.chainId}:${b.betId}`)).toEqual(expected);
    expect(total).toBe(expected.length);
    for (const bet of seen) {
      expect(bet.game).toBe("dice");
      expect(["SETTLED", "PENDING"]).toContain(bet.status);
      expect(BigInt(bet.placedAt) >= from && BigInt(bet.placedAt) < to).toBe(true);
    }
  });

  it("answers an empty page for a wallet with no bets, and huge time bounds without error", async () => {
    const empty = await t.gql<Page>(
      `{ playerBets(wallet: "0x000000000000000000000000000000000000dead") { totalCount pageInfo { hasNextPage endCursor } edges { cursor } } }`,
    );
    expect(empty.data!.playerBets).toEqual({ totalCount: 0, pageInfo: { hasNextPage: false, endCursor: null }, edges: [] });
    const huge = (1n << 255n).toString();
    const beyond = await t.gql<Page>(`{ a: playerBets(wallet: "${t.fixtures.whale}", filter: { placedFrom: "${huge}" }) { totalCount }
      b: playerBets(wallet: "${t.fixtures.whale}", filter: { placedTo: "${huge}" }) { totalCount } }`);
    expect(beyond.errors).toBeUndefined();
    const data = beyond.data as unknown as { a: { totalCount: number }; b: { totalCount: number } };
    expect(data.a.totalCount).toBe(0);
    expect(data.b.totalCount).toBe(await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } }));
  });
});
