import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// The explorer queries through the gateway: `bets` pages walk every bet of every wallet in
// (placedAt, chainId, betId) order with no duplicate and no gap, under each filter, compared with
// what an independent SQL statement returns; cursors are bound to their filter and order;
// betsByTransaction finds a bet by any of its three transactions, whatever the hash's case.

interface Node {
  chainId: number;
  betId: string;
}
interface BetsPage {
  bets: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { cursor: string; node: Node }[] };
}
interface Filter {
  chainId?: number;
  status?: string[];
  game?: string;
  player?: string;
  token?: string;
  placedFrom?: string;
  placedTo?: string;
}

const TOKEN = "0x00000000000000000000000000000000000000aa";
let t: TestStack;
let placedRange: [bigint, bigint];

beforeAll(async () => {
  t = await startTestStack({ bets: 700, wallets: 9, whaleShare: 0.3, provenLimit: 5, outbox: false });
  // The fixtures stake the native coin only: give every fifth bet another token.
  await t.db.prisma.$executeRawUnsafe(`UPDATE "Bet" SET token = '${TOKEN}' WHERE "betId" % 5 = 0`);
  const [range] = await t.db.prisma.$queryRawUnsafe<[{ lo: bigint; hi: bigint }]>(`SELECT min("placedAt") AS lo, max("placedAt") AS hi FROM "Bet"`);
  placedRange = [range!.lo, range!.hi];
});
afterAll(async () => {
  await t?.close();
});

const key = (n: Node) => `${n.chainId}:${n.betId}`;

async function page(filter: Filter | undefined, first: number, after: string | null, direction = "DESC") {
  return t.gql<BetsPage>(
    `query ($filter: BetsFilter, $first: Int, $after: String) {
      bets(filter: $filter, first: $first, after: $after, orderDirection: ${direction}) {
        totalCount pageInfo { hasNextPage endCursor } edges { cursor node { chainId betId } } } }`,
    { filter, first, after },
  );
}

async function walk(filter: Filter | undefined, first: number, direction: "ASC" | "DESC" = "DESC") {
  const seen: string[] = [];
  let after: string | null = null;
  let total = -1;
  for (let pages = 0; ; pages++) {
    expect(pages).toBeLessThan(400);
    const response = await page(filter, first, after, direction);
    expect(response.errors).toBeUndefined();
    const connection = response.data!.bets;
    total = connection.totalCount;
    seen.push(...connection.edges.map((e) => key(e.node)));
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  return { seen, total };
}

/** The same list, written independently: hand-written SQL over "Bet". */
async function recount(filter: Filter = {}, direction: "ASC" | "DESC" = "DESC"): Promise<string[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.chainId !== undefined) where.push(`"chainId" = ${param(filter.chainId)}`);
  if (filter.status !== undefined) where.push(`status::text = ANY(${param(filter.status)}::text[])`);
  if (filter.game !== undefined) where.push(`game = ${param(filter.game)}`);
  if (filter.player !== undefined) where.push(`player = ${param(filter.player.toLowerCase())}`);
  if (filter.token !== undefined) where.push(`token = ${param(filter.token.toLowerCase())}`);
  if (filter.placedFrom !== undefined) where.push(`"placedAt" >= ${param(filter.placedFrom)}::numeric`);
  if (filter.placedTo !== undefined) where.push(`"placedAt" < ${param(filter.placedTo)}::numeric`);
  const rows = await t.db.prisma.$queryRawUnsafe<{ k: string }[]>(
    `SELECT "chainId"::text || ':' || "betId"::text AS k FROM "Bet" ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY "placedAt" ${direction}, "chainId" ${direction}, "betId" ${direction}`,
    ...params,
  );
  return rows.map((r) => r.k);
}

describe("bets (explorer)", () => {
  it("has bets of several wallets, on both networks, with placedAt ties within and across networks", async () => {
    const [stats] = await t.db.prisma.$queryRawUnsafe<[{ wallets: number; chains: number; tied: number }]>(`
      SELECT count(DISTINCT player)::int AS wallets, count(DISTINCT "chainId")::int AS chains,
             (SELECT count(*)::int FROM (SELECT 1 FROM "Bet" GROUP BY "placedAt" HAVING count(DISTINCT "chainId") > 1) x) AS tied
      FROM "Bet"`);
    expect(stats.wallets).toBeGreaterThanOrEqual(5);
    expect(stats.chains).toBe(2);
    expect(stats.tied).toBeGreaterThan(0);
  });

  it.each([
    ["DESC", 37],
    ["ASC", 100],
  ] as const)("walks every bet %s in pages of %d with no duplicate and no gap", async (direction, first) => {
    const expected = await recount({}, direction);
    expect(expected.length).toBe(700);
    const { seen, total } = await walk(undefined, first, direction);
    expect(seen).toEqual(expected);
    expect(total).toBe(expected.length);
  });

  it("holds each single filter, and a time range with one", async () => {
    const [player] = t.fixtures.wallets;
    const [from, to] = [placedRange[0] + 100n, placedRange[1] - 100n].map(String);
    const filters: Filter[] = [
      { chainId: 1337 },
      { status: ["PENDING"] },
      { status: ["REFUNDED", "SETTLED"] },
      { game: "dice" },
      { player: player!.toUpperCase().replace("0X", "0x") },
      { token: TOKEN },
      { placedFrom: from },
      { placedTo: to },
      { placedFrom: from, placedTo: to, game: "coinflip" },
      { player, chainId: 31337, status: ["SETTLED"] },
    ];
    for (const filter of filters) {
      const expected = await recount(filter);
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
      const { seen, total } = await walk(filter, 29);
      expect(seen, JSON.stringify(filter)).toEqual(expected);
      expect(total, JSON.stringify(filter)).toBe(expected.length);
    }
  });

  it("matches the recount under generated filters and page sizes", async () => {
    const games = ["dice", "coinflip", "wheel", "nothing"];
    const arbitraryFilter = fc.record(
      {
        chainId: fc.constantFrom(31337, 1337),
        status: fc.subarray(["PENDING", "SETTLED", "REFUNDED"], { minLength: 1 }),
        game: fc.constantFrom(...games),
        player: fc.constantFrom(...t.fixtures.wallets.slice(0, 4)),
        token: fc.constantFrom(TOKEN, "0x0000000000000000000000000000000000000000"),
        placedFrom: fc.bigInt({ min: placedRange[0] - 10n, max: placedRange[1] + 10n }).map(String),
        placedTo: fc.bigInt({ min: placedRange[0] - 10n, max: placedRange[1] + 10n }).map(String),
      },
      { requiredKeys: [] },
    );
    let runs = 0;
    let withBets = 0;
    await fc.assert(
      fc.asyncProperty(
        arbitraryFilter,
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom("ASC" as const, "DESC" as const),
        async (filter, first, direction) => {
          const expected = await recount(filter, direction);
          runs++;
          if (expected.length > 0) withBets++;
          const { seen, total } = await walk(filter, Math.max(first, Math.ceil(expected.length / 40)), direction);
          expect(seen).toEqual(expected);
          expect(total).toBe(expected.length);
        },
      ),
      // No fixed seed: each run tries other filters (a failure prints its seed to replay it).
      { numRuns: 25 },
    );
    // Filters that match bets, not only empty pages (about a third of the runs do).
    expect(withBets, `${withBets} of ${runs} runs`).toBeGreaterThan(0);
  });

  it("answers totalCount from counters equal to a recount (BetCount kept by triggers)", async () => {
    const drift = await t.db.prisma.$queryRawUnsafe<unknown[]>(`
      SELECT * FROM (SELECT "chainId", status, count(*) AS n FROM "Bet" GROUP BY 1, 2) b
      FULL JOIN "BetCount" c USING ("chainId", status) WHERE coalesce(b.n, 0) <> coalesce(c.bets, 0)`);
    expect(drift).toEqual([]);
    const response = await page({ chainId: 31337, status: ["SETTLED", "PENDING"] }, 1, null);
    expect(response.data!.bets.totalCount).toBe((await recount({ chainId: 31337, status: ["SETTLED", "PENDING"] })).length);
    // A reorg's rollback (delete and update), inside one transaction, leaves the counters exact.
    await t.db.prisma.$transaction([
      t.db.prisma.$executeRawUnsafe(`DELETE FROM "BetResult" WHERE "chainId" = 1337 AND "betId" > 330`),
      t.db.prisma.$executeRawUnsafe(`DELETE FROM "Bet" WHERE "chainId" = 1337 AND "betId" > 330`),
      t.db.prisma.$executeRawUnsafe(`UPDATE "Bet" SET status = 'PENDING' WHERE "chainId" = 1337 AND "betId" BETWEEN 300 AND 330`),
    ]);
    const after = await t.db.prisma.$queryRawUnsafe<unknown[]>(`
      SELECT * FROM (SELECT "chainId", status, count(*) AS n FROM "Bet" GROUP BY 1, 2) b
      FULL JOIN "BetCount" c USING ("chainId", status) WHERE coalesce(b.n, 0) <> coalesce(c.bets, 0)`);
    expect(after).toEqual([]);
    expect((await page(undefined, 1, null)).data!.bets.totalCount).toBe((await recount()).length);
  });

  it("refuses edited cursors and cursors of another filter, order or query, naming `after`", async () => {
    const first = await page({ game: "dice" }, 5, null);
    const cursor = first.data!.bets.pageInfo.endCursor!;
    const json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Record<string, string>;
    const edit = (payload: Record<string, string>) => Buffer.from(JSON.stringify(payload)).toString("base64url");
    const playerCursor = (
      await t.gql<{ playerBets: { pageInfo: { endCursor: string } } }>(`query ($w: Address!) { playerBets(wallet: $w, first: 1) { pageInfo { endCursor } } }`, {
        w: t.fixtures.whale,
      })
    ).data!.playerBets.pageInfo.endCursor;
    const refused: [Filter | undefined, string, string][] = [
      [{ game: "dice" }, edit({ ...json, i: `0${json.i}` }), "DESC"],
      [{ game: "dice" }, edit({ ...json, q: `${json.q!.slice(1)}A` }), "DESC"],
      [{ game: "dice" }, edit({ ...json, t: "-1" }), "DESC"],
      [{ game: "dice" }, edit({ ...json, extra: "1" }), "DESC"],
      [{ game: "dice" }, `${cursor}x`, "DESC"],
      [{ game: "coinflip" }, cursor, "DESC"],
      [undefined, cursor, "DESC"],
      [{ game: "dice" }, cursor, "ASC"],
      [{ game: "dice" }, playerCursor, "DESC"],
    ];
    for (const [filter, after, direction] of refused) {
      const response = await page(filter, 5, after, direction);
      expect(response.errors?.[0]?.extensions, after).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "after" });
    }
    // The cursor still works where it was issued.
    expect((await page({ game: "dice" }, 5, cursor)).errors).toBeUndefined();
  });

  it("names `first` outside 1..100", async () => {
    for (const first of [0, 101, -1]) {
      const response = await page(undefined, first, null);
      expect(response.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "first" });
    }
  });
});

describe("betsByTransaction", () => {
  const query = `query ($c: ChainId!, $h: Bytes32!) { betsByTransaction(chainId: $c, txHash: $h) { chainId betId placedTx settledTx refundedTx } }`;
  type Found = { betsByTransaction: { chainId: number; betId: string; placedTx: string; settledTx: string | null; refundedTx: string | null }[] };

  it("finds bets by the transaction that placed, settled or refunded them, with the hash in upper case", async () => {
    for (const status of ["SETTLED", "REFUNDED"] as const) {
      const bet = await t.db.prisma.bet.findFirstOrThrow({ where: { status }, orderBy: { betId: "asc" } });
      const upper = (hash: string) => `0x${hash.slice(2).toUpperCase()}`;
      const change = status === "SETTLED" ? bet.settledTx! : bet.refundedTx!;
      for (const hash of [bet.placedTx, change]) {
        const [expected] = await t.db.prisma.$queryRawUnsafe<[{ keys: string[] }]>(
          `SELECT coalesce(array_agg("betId"::text ORDER BY "betId"), '{}') AS keys FROM "Bet"
           WHERE "chainId" = $1 AND $2 IN ("placedTx", "settledTx", "refundedTx")`,
          bet.chainId,
          hash,
        );
        const response = await t.gql<Found>(query, { c: Number(bet.chainId), h: upper(hash) });
        expect(response.errors).toBeUndefined();
        const found = response.data!.betsByTransaction;
        expect(found.map((b) => b.betId).sort()).toEqual([...expected.keys].sort());
        expect(found.map((b) => b.betId)).toContain(bet.betId.toFixed(0));
      }
    }
  });

  it("answers at most 100 bets, the first 100 in (placedAt, betId) order, for a transaction holding more", async () => {
    // A contract may place many bets in one transaction; the answer stays a bounded list (priced as 100).
    const hash = `0x${"cd".repeat(32)}`;
    const [{ chainId }] = await t.db.prisma.$queryRawUnsafe<[{ chainId: bigint }]>(`SELECT "chainId" FROM "Bet" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`);
    await t.db.prisma.$executeRawUnsafe(
      `UPDATE "Bet" SET "placedTx" = $1 WHERE ("chainId", "betId") IN (SELECT "chainId", "betId" FROM "Bet" WHERE "chainId" = $2 ORDER BY "betId" DESC LIMIT 130)`,
      hash,
      chainId,
    );
    const [expected] = await t.db.prisma.$queryRawUnsafe<[{ keys: string[] }]>(
      `SELECT array_agg("betId"::text ORDER BY "placedAt", "betId") AS keys
         FROM (SELECT "betId", "placedAt" FROM "Bet" WHERE "chainId" = $1 AND "placedTx" = $2 ORDER BY "placedAt", "betId" LIMIT 100) AS first`,
      chainId,
      hash,
    );
    const response = await t.gql<Found>(query, { c: Number(chainId), h: hash });
    expect(response.errors).toBeUndefined();
    expect(response.data!.betsByTransaction.map((b) => b.betId)).toEqual(expected.keys);
  });

  it("is empty for an unknown transaction and refuses an unknown network", async () => {
    const hash = `0x${"ab".repeat(32)}`;
    expect((await t.gql<Found>(query, { c: 31337, h: hash })).data!.betsByTransaction).toEqual([]);
    const unknown = await t.gql<Found>(query, { c: 999, h: hash });
    expect(unknown.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});
