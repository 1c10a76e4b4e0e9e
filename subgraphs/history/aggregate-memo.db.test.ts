import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// The same aggregate asked twice in one request is computed once: aliased totalCounts under one
// filter (the attack of issue 21: each alias counted the table again) share one statement.

const statements: string[] = [];
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 }, { onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await t?.close();
});

/** The statements that count Bet rows (not the counter tables, not the pages). */
const betCounts = () => statements.filter((sql) => /count\(/i.test(sql) && /FROM "(public"\.")?Bet"/.test(sql) && !/BetCount/.test(sql));

/** The page statements (ordered, limited reads of Bet rows). */
const pages = () => statements.filter((sql) => /FROM "(public"\.")?Bet"/.test(sql) && /ORDER BY/i.test(sql) && /LIMIT/i.test(sql));

async function countsOf(query: string, variables?: Record<string, unknown>): Promise<{ counts: number[]; statements: number }> {
  statements.length = 0;
  const { data, errors } = await t.gql<Record<string, { totalCount: number }>>(query, variables);
  expect(errors).toBeUndefined();
  return { counts: Object.values(data!).map((connection) => connection.totalCount), statements: betCounts().length };
}

describe("aliased totalCounts under one filter", () => {
  it("counts once for two aliased `bets` under a game filter", async () => {
    const { counts, statements: seen } = await countsOf(`{
      a: bets(first: 1, filter: { game: "dice" }) { totalCount }
      b: bets(first: 1, filter: { game: "dice" }) { totalCount } }`);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBe(counts[0]);
    expect(seen).toBe(1);
  });

  it("counts once for nine aliased `playerBets` of one wallet under a game filter", async () => {
    const wallet = t.fixtures.whale;
    const aliases = Array.from({ length: 9 }, (_, i) => `w${i}: playerBets(wallet: $wallet, first: 1, filter: { game: "dice" }) { totalCount }`);
    const { counts, statements: seen } = await countsOf(`query ($wallet: Address!) { ${aliases.join("\n")} }`, { wallet });
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeGreaterThan(0);
    expect(seen).toBe(1);
  });

  it("counts once for two aliased totalCounts of one connection", async () => {
    statements.length = 0;
    const { data, errors } = await t.gql<{ bets: { x: number; y: number } }>(`{ bets(first: 1, filter: { placedFrom: "1" }) { x: totalCount y: totalCount } }`);
    expect(errors).toBeUndefined();
    expect(data!.bets.x).toBeGreaterThan(0);
    expect(data!.bets.y).toBe(data!.bets.x);
    expect(betCounts()).toHaveLength(1);
  });

  it("reads no page for connections asked only their totalCount: nine aliases are one statement, not ten", async () => {
    const aliases = Array.from({ length: 9 }, (_, i) => `w${i}: playerBets(wallet: $wallet, first: 1, filter: { game: "dice" }) { totalCount __typename }`);
    statements.length = 0;
    expect((await t.gql(`query ($wallet: Address!) { ${aliases.join("\n")} }`, { wallet: t.fixtures.whale })).errors).toBeUndefined();
    // Each alias's page statement held a pool connection of its own, all at once (issue 21's pool waiting).
    expect(pages()).toHaveLength(0);
    expect(betCounts()).toHaveLength(1);
    statements.length = 0;
    expect((await t.gql(`{ bets(first: 1, filter: { game: "dice" }) { a: totalCount b: totalCount } }`)).errors).toBeUndefined();
    expect(pages()).toHaveLength(0);
    expect(betCounts()).toHaveLength(1);
  });

  it("still reads the page when anything beside totalCount is selected, through a fragment", async () => {
    statements.length = 0;
    const { data, errors } = await t.gql<{ playerBets: { totalCount: number; nodes: unknown[] } }>(
      `query ($wallet: Address!) { playerBets(wallet: $wallet, first: 2) { totalCount ...N } } fragment N on BetConnection { nodes { betId } }`,
      { wallet: t.fixtures.whale },
    );
    expect(errors).toBeUndefined();
    expect(data!.playerBets.nodes).toHaveLength(2);
    expect(pages()).toHaveLength(1);
  });

  it("still counts each different filter", async () => {
    const { counts, statements: seen } = await countsOf(`{
      a: bets(first: 1, filter: { game: "dice" }) { totalCount }
      b: bets(first: 1, filter: { game: "coinflip" }) { totalCount } }`);
    expect(counts).toHaveLength(2);
    expect(seen).toBe(2);
  });
});
