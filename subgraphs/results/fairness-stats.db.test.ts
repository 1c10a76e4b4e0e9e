import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIELD_MODULUS } from "../../chain/betvault.ts";
import { fairnessDrift } from "../../test/fairness-counts.ts";
import { conventionViolations, startTestStack, type TestStack } from "../../test/stack.ts";
import { chiSquare, chiSquarePValue, expectedRtp } from "./fairness.ts";

// fairnessStats through the gateway on the fixture set: every entry against the bets themselves
// (counted here from the rows and, for finality, from Bet.finalized as the history subgraph
// serves it), the histogram summing to the settled count, the filters and the empty state.

const FIELDS = `chainId game settledBets wonBets refundedBets totalStake totalPayout observedRtp expectedRtp
  outcomeHistogram chiSquare pValue finalizedSettledBets`;

interface Stats {
  chainId: number;
  game: string;
  settledBets: string;
  wonBets: string;
  refundedBets: string;
  totalStake: string;
  totalPayout: string;
  observedRtp: number;
  expectedRtp: number;
  outcomeHistogram: string[];
  chiSquare: number;
  pValue: number;
  finalizedSettledBets: string;
}

const statements: string[] = [];
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 160 }, { onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await t?.close();
});

async function stats(args = ""): Promise<Stats[]> {
  const response = await t.gql<{ fairnessStats: Stats[] }>(`{ fairnessStats${args} { ${FIELDS} } }`);
  expect(response.errors).toBeUndefined();
  expect(conventionViolations(response.data)).toEqual([]);
  return response.data!.fairnessStats;
}

/** Settled bets of a game that Bet.finalized (history subgraph) says are final, asked 100 ids at a time. */
async function finalizedThroughBets(chainId: number, game: string): Promise<number> {
  const ids = (await t.db.prisma.bet.findMany({ where: { chainId: BigInt(chainId), game, status: "SETTLED" }, select: { betId: true } })).map((b) =>
    b.betId.toFixed(0),
  );
  let final = 0;
  for (let i = 0; i < ids.length; i += 100) {
    const response = await t.gql<{ betResults: { finalized: boolean }[] }>(
      `query ($ids: [UInt256!]!) { betResults(chainId: ${chainId}, betIds: $ids) { finalized } }`,
      {
        ids: ids.slice(i, i + 100),
      },
    );
    expect(response.errors).toBeUndefined();
    final += response.data!.betResults.filter((b) => b.finalized).length;
  }
  return final;
}

describe("fairnessStats", () => {
  it("gives every network and game, each entry equal to what its bets and results say, the histogram summing to settledBets", async () => {
    // A few settlements in each network's head block: not final yet (1 confirmation).
    await t.db.prisma.$executeRawUnsafe(`
      UPDATE "Bet" b SET "lastChangeBlock" = c."headBlock", "settledBlock" = c."headBlock"
      FROM "IndexingCursor" c
      WHERE b."chainId" = c."chainId" AND b.status = 'SETTLED' AND b."betId" % 7 = 0`);
    const all = await stats();
    expect(all.map((s) => `${s.chainId}:${s.game}`)).toEqual(["1337:coinflip", "1337:dice", "1337:wheel", "31337:coinflip", "31337:dice", "31337:wheel"]);
    let settledEverywhere = 0;
    for (const s of all) {
      const where = { chainId: BigInt(s.chainId), game: s.game };
      const settled = await t.db.prisma.bet.findMany({ where: { ...where, status: "SETTLED" }, include: { result: true } });
      const refunded = await t.db.prisma.bet.count({ where: { ...where, status: "REFUNDED" } });
      const stake = settled.reduce((sum, b) => sum + BigInt(b.stake.toFixed(0)), 0n);
      const payout = settled.reduce((sum, b) => sum + BigInt(b.result!.payout.toFixed(0)), 0n);
      const histogram = Array<bigint>(16).fill(0n);
      for (const b of settled) histogram[Number((16n * BigInt(b.result!.outcome.toFixed(0))) / FIELD_MODULUS)]! += 1n;
      expect(s, `${s.chainId}:${s.game}`).toEqual({
        chainId: s.chainId,
        game: s.game,
        settledBets: String(settled.length),
        wonBets: String(settled.filter((b) => b.result!.won).length),
        refundedBets: String(refunded),
        totalStake: String(stake),
        totalPayout: String(payout),
        observedRtp: stake === 0n ? 0 : expect.closeTo(Number(payout) / Number(stake), 12),
        expectedRtp: expectedRtp(s.game),
        outcomeHistogram: histogram.map(String),
        chiSquare: expect.closeTo(chiSquare(histogram), 9),
        pValue: settled.length === 0 ? 1 : expect.closeTo(chiSquarePValue(chiSquare(histogram)), 12),
        finalizedSettledBets: String(await finalizedThroughBets(s.chainId, s.game)),
      });
      expect(s.outcomeHistogram.reduce((sum, n) => sum + BigInt(n), 0n)).toBe(BigInt(s.settledBets));
      expect(s.pValue).toBeGreaterThanOrEqual(0);
      expect(s.pValue).toBeLessThanOrEqual(1);
      settledEverywhere += settled.length;
    }
    expect(settledEverywhere).toBe(t.fixtures.counts.SETTLED);
    expect(settledEverywhere).toBeGreaterThan(50);
    // Some settled bets are final and some (the fixture set's newest) are not: finality discriminates.
    const final = all.reduce((sum, s) => sum + Number(s.finalizedSettledBets), 0);
    expect(final).toBeGreaterThan(0);
    expect(final).toBeLessThan(settledEverywhere);
    expect(await fairnessDrift(t.db)).toEqual([]);
  });

  it("filters by network and game, answers zeros for a game without bets, and refuses an unknown chainId", async () => {
    const all = await stats();
    expect(await stats("(chainId: 31337)")).toEqual(all.filter((s) => s.chainId === 31337));
    expect(await stats(`(game: "dice")`)).toEqual(all.filter((s) => s.game === "dice"));
    expect(await stats(`(chainId: 1337, game: "wheel")`)).toEqual(all.filter((s) => s.chainId === 1337 && s.game === "wheel"));
    expect(await stats(`(game: "roulette")`)).toEqual([]);

    // No bet of a game yet: zeros, p-value 1, and the rules' expected return all the same.
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "Bet" WHERE "chainId" = 1337 AND game = 'wheel'`);
    expect(await stats(`(chainId: 1337, game: "wheel")`)).toEqual([
      {
        chainId: 1337,
        game: "wheel",
        settledBets: "0",
        wonBets: "0",
        refundedBets: "0",
        totalStake: "0",
        totalPayout: "0",
        observedRtp: 0,
        expectedRtp: 0.98,
        outcomeHistogram: Array(16).fill("0"),
        chiSquare: 0,
        pValue: 1,
        finalizedSettledBets: "0",
      },
    ]);

    const unknown = await t.gql(`{ fairnessStats(chainId: 5) { game } }`);
    expect(unknown.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
    // A game no id can be (PostgreSQL text holds no U+0000; ids are short): the argument is named, no database error.
    for (const game of ["a\u0000b", "g".repeat(65)]) {
      const bad = await t.gql(`query ($game: String) { fairnessStats(game: $game) { game } }`, { game });
      expect(bad.errors?.[0]?.extensions, JSON.stringify(game.slice(0, 8))).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "game" });
    }
  });

  it("is served from the counters and the unfinalized settlements: one statement, short-lived in caches", async () => {
    statements.length = 0;
    const response = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ fairnessStats { game settledBets finalizedSettledBets } }" }),
    });
    expect(response.headers.get("cache-control")).toBe("max-age=2, public");
    const touchingBets = statements.filter((sql) => sql.includes('"Bet"') || sql.includes('"FairnessCounter"'));
    expect(touchingBets).toHaveLength(1);
    expect(touchingBets[0]).toContain('"FairnessCounter"');
  });
});
