import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// Bet.tokenInfo of a page costs one statement for every token of the page (DataLoader), whatever
// the page size, and answers each bet with its own token's row.

const USDC = "0x00000000000000000000000000000000000000aa";
const statements: string[] = [];
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 }, { onQuery: (sql) => statements.push(sql), networkTtlMs: 600_000 });
  // Some of the whale's bets in an ERC-20 token (the fixtures' bets are all in the native coin).
  await t.db.prisma.token.create({ data: { chainId: 31337n, address: USDC, symbol: "USDC", decimals: 6 } });
  const some = await t.db.prisma.bet.findMany({ where: { player: t.fixtures.whale, chainId: 31337n }, take: 5, select: { betId: true } });
  await t.db.prisma.bet.updateMany({ where: { chainId: 31337n, betId: { in: some.map((b) => b.betId) } }, data: { token: USDC } });
});
afterAll(async () => {
  await t?.close();
});

describe("Bet.tokenInfo", () => {
  it("serves each bet's token from one statement per page", async () => {
    const query = `query ($wallet: Address!) { playerBets(wallet: $wallet, first: 100) {
      nodes { chainId token tokenInfo { address symbol decimals } } } }`;
    const variables = { wallet: t.fixtures.whale };
    await t.gql(query, variables); // warms the process-wide network directory
    statements.length = 0;
    const { data, errors } = await t.gql<{
      playerBets: { nodes: { chainId: number; token: string; tokenInfo: { address: string; symbol: string; decimals: number } }[] };
    }>(query, variables);
    expect(errors).toBeUndefined();
    const nodes = data!.playerBets.nodes;
    expect(nodes.length).toBeGreaterThan(20);
    for (const bet of nodes) {
      expect(bet.tokenInfo.address).toBe(bet.token);
      expect(bet.tokenInfo).toEqual(bet.token === USDC ? { address: USDC, symbol: "USDC", decimals: 6 } : { address: bet.token, symbol: "ETH", decimals: 18 });
    }
    expect(nodes.filter((b) => b.token === USDC)).toHaveLength(5);
    expect(statements.filter((sql) => /FROM "(public"\.")?Token"/.test(sql))).toHaveLength(1);
  });
});
