import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// A wallet page reads each bet's narrow row (data.ts NARROW_COLUMNS) when the operation cannot
// select any other field of a bet, and every column when it can: the same bets either way, and
// every field of the API served from its own column. Its totalCount from the per-wallet counters
// comes in the page's own statement.

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

describe("playerBets proofs", () => {
  it("serves the same proofs whether or not the operation can select piB and piC (read only then)", async () => {
    const proofs = async (fields: string) => {
      const { data, errors } = await t.gql<{ playerBets: { nodes: { result: { proof: Record<string, unknown> } | null }[] } }>(
        `query ($wallet: Address!) { playerBets(wallet: $wallet, first: 100) { nodes { result { proof { ${fields} } } } } }`,
        { wallet: t.fixtures.whale },
      );
      expect(errors).toBeUndefined();
      return data!.playerBets.nodes.flatMap((node) => (node.result ? [node.result.proof] : []));
    };
    const narrow = await proofs("protocol curve piA publicSignals verified");
    const whole = await proofs("protocol curve piA piB piC publicSignals verified");
    expect(narrow.length).toBeGreaterThan(10);
    expect(whole.every((proof) => Array.isArray(proof.piB) && Array.isArray(proof.piC))).toBe(true);
    expect(narrow).toEqual(whole.map(({ piB: _piB, piC: _piC, ...proof }) => proof));
    expect((await proofs("piC")).map((proof) => proof.piC)).toEqual(whole.map((proof) => proof.piC));
  });
});

describe("playerBets totalCount", () => {
  const counted = async (variables: Record<string, unknown>) => {
    statements.length = 0;
    const { data, errors } = await t.gql<{ playerBets: { totalCount: number; nodes: { betId: string }[] } }>(
      `query ($wallet: Address!, $first: Int!, $after: String, $status: [BetStatus!]) {
        playerBets(wallet: $wallet, first: $first, after: $after, filter: { status: $status }) { totalCount nodes { betId } pageInfo { endCursor } } }`,
      { wallet: t.fixtures.whale, ...variables },
    );
    expect(errors).toBeUndefined();
    return { ...data!.playerBets, statements: [...statements] };
  };

  it("comes with the page in one statement, equal to the wallet's bets of the filter", async () => {
    const all = await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } });
    const settled = await t.db.prisma.bet.count({ where: { player: t.fixtures.whale, status: "SETTLED" } });
    const page = await counted({ first: 10 });
    expect(page.totalCount).toBe(all);
    // One statement reads the counters, and it is the page's.
    expect(page.statements.filter((sql) => sql.includes(`"PlayerBetCount"`)).map((sql) => sql.includes(`FROM "Bet"`))).toEqual([true]);
    expect((await counted({ first: 10, status: ["SETTLED"] })).totalCount).toBe(settled);
  });

  it("is counted on its own when the page is empty", async () => {
    const all = await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } });
    const { data } = await t.gql<{ playerBets: { pageInfo: { endCursor: string } } }>(
      `query ($wallet: Address!, $first: Int!) { playerBets(wallet: $wallet, first: $first) { pageInfo { endCursor } } }`,
      { wallet: t.fixtures.whale, first: 100 },
    );
    const beyond = await counted({ first: 100, after: data!.playerBets.pageInfo.endCursor });
    expect(beyond.nodes).toEqual([]);
    expect(beyond.totalCount).toBe(all);
  });
});
