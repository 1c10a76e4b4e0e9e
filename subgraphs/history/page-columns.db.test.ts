import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// A wallet page reads each bet's narrow row (data.ts NARROW_COLUMNS) when the operation cannot
// select any other field of a bet, and every column when it can: the same bets either way, and
// every field of the API served from its own column.

const statements: string[] = [];
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 160 }, { onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await t?.close();
});

const pageStatements = () => statements.filter((sql) => sql.includes(`FROM "Bet"`) && sql.includes("ORDER BY"));

interface Node {
  chainId: number;
  betId: string;
  player: string;
  stake: string;
  game: string;
  status: string;
  placedBlock: string;
  result: { outcome: string } | null;
  [wide: string]: unknown;
}

async function page(fields: string): Promise<Node[]> {
  statements.length = 0;
  const { data, errors } = await t.gql<{ playerBets: { nodes: Node[] } }>(
    `query ($wallet: Address!) { playerBets(wallet: $wallet, first: 100) { nodes { chainId betId player stake game status placedBlock result { outcome } ${fields} } } }`,
    { wallet: t.fixtures.whale },
  );
  expect(errors).toBeUndefined();
  return data!.playerBets.nodes;
}

describe("playerBets page columns", () => {
  it("reads a narrow row of each bet for a wallet page, and the same bets as a page of every column", async () => {
    const narrow = await page("");
    const [narrowStatement] = pageStatements();
    expect(narrowStatement).toBeDefined();
    expect(narrowStatement).not.toMatch(/"placedTx"|"clientSeed"|"placedBlockHash"|"settledAt"|"finalizedUpdateBlock"/);
    const wide = await page("placedTx");
    expect(pageStatements()[0]).toMatch(/"placedTx"/);
    expect(narrow.length).toBeGreaterThan(30);
    expect(narrow).toEqual(wide.map(({ placedTx: _placedTx, ...bet }) => bet));
  });

  it("serves every field of the other columns from its own column", async () => {
    const fields = "token clientSeed serverSeedHash placedTx placedAt settledBlock settledTx settledAt refundedBlock refundedTx refundedAt";
    const nodes = await page(fields);
    const rows = await t.db.prisma.bet.findMany({ where: { player: t.fixtures.whale } });
    const byKey = new Map(rows.map((row) => [`${row.chainId}:${row.betId.toFixed(0)}`, row]));
    const text = (value: { toString(): string } | null) => (value === null ? null : value.toString());
    const statuses = new Set<string>();
    for (const node of nodes) {
      const row = byKey.get(`${node.chainId}:${node.betId}`)!;
      statuses.add(node.status);
      expect(node).toMatchObject({
        token: row.token,
        clientSeed: row.clientSeed,
        serverSeedHash: row.serverSeedHash,
        placedTx: row.placedTx,
        placedAt: text(row.placedAt),
        settledBlock: text(row.settledBlock),
        settledTx: row.settledTx,
        settledAt: text(row.settledAt),
        refundedBlock: text(row.refundedBlock),
        refundedTx: row.refundedTx,
        refundedAt: text(row.refundedAt),
      });
    }
    expect([...statuses].sort()).toEqual(["PENDING", "REFUNDED", "SETTLED"]);
  });
});
