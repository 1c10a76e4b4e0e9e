import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// betResults of 100 ids costs one SQL statement in each subgraph the query reaches: DataLoader
// batches every id of a request, and the bet and its result come back from one joined query. The
// indexed heads a request reads at cost none in steady state (kit/indexed-heads.ts).

/** A test stack for the enclosing describe, started before its tests, with every SQL statement it sends. */
function stackLoggingStatements(networkTtlMs: number, headsTtlMs = networkTtlMs): { statements: string[]; params: string[]; stack: () => TestStack } {
  const statements: string[] = [];
  /** Each statement's parameters (JSON), at the same index. */
  const params: string[] = [];
  let stack: TestStack | undefined;
  beforeAll(async () => {
    stack = await startTestStack(
      { bets: 120 },
      {
        onQuery: (sql, values) => {
          statements.push(sql);
          params.push(values);
        },
        networkTtlMs,
        headsTtlMs,
      },
    );
  });
  afterAll(async () => {
    await stack?.close();
  });
  return {
    statements,
    params,
    stack: () => {
      if (!stack) throw new Error("the test stack is not started");
      return stack;
    },
  };
}

describe("betResults batching", () => {
  const { statements, stack } = stackLoggingStatements(600_000);
  it("answers 100 ids across three subgraphs with one statement per subgraph", async () => {
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) {
      betId player status network { name } result { outcome proof { piA verified } } } }`;
    const ids = Array.from({ length: 100 }, (_, i) => String(i + 1));
    await stack().gql(query, { ids }); // warms the network directory and the heads (kept for the whole test)
    statements.length = 0;
    const { data, errors } = await stack().gql<{ betResults: ({ betId: string } | null)[] }>(query, { ids });
    expect(errors).toBeUndefined();
    expect(data!.betResults.filter(Boolean).length).toBeGreaterThan(50);

    const touching = (table: string) => statements.filter((sql) => new RegExp(`FROM "(public"\\.")?${table}"`).test(sql));
    // The indexed heads it answers at (extensions.readAt) are the ones read by an earlier request: no statement.
    expect(touching("IndexingCursor")).toHaveLength(0);
    const dataStatements = statements.filter((sql) => !/FROM "(public"\.")?IndexingCursor"/.test(sql));
    // results: bets joined with their results, one statement for all 100 ids
    expect(statements.filter((sql) => sql.includes('"BetResult"'))).toHaveLength(1);
    // history: the 100 entity references in one statement
    expect(touching("Bet").filter((sql) => !sql.includes('"BetResult"'))).toHaveLength(1);
    // the networks' names (the history subgraph's now, or the networks subgraph's): one statement
    expect(touching("Network")).toHaveLength(1);
    expect(dataStatements, dataStatements.join("\n---\n")).toHaveLength(3);
  });
});

describe("the indexed heads a request reads at", () => {
  const { statements, stack } = stackLoggingStatements(600_000);
  const headsRead = () => statements.filter((sql) => /FROM "(public"\.")?IndexingCursor"/.test(sql));
  // contracts: a field of the networks subgraph alone, so that the request reaches all three.
  const query = `query ($ids: [UInt256!]!, $m: [MinBlock!]) { betResults(chainId: 31337, betIds: $ids, minBlock: $m) { betId player status network { name contracts { name } } result { outcome } } }`;
  const ask = async (minBlock?: bigint) => {
    const answer = await stack().gql<{ betResults: unknown[] }>(query, {
      ids: ["1", "2"],
      m: minBlock === undefined ? null : [{ chainId: 31337, block: minBlock.toString() }],
    });
    expect(answer.errors).toBeUndefined();
    const { extensions } = answer as { extensions?: { readAt?: { chainId: number; block: string }[] } };
    return extensions?.readAt?.find((head) => head.chainId === 31337)?.block;
  };

  it("are read again only for a minBlock above the ones held, and then held at the new head", async () => {
    const cursor = await stack().db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } });
    expect(await ask()).toBe(cursor.indexedBlock.toString());
    await stack().db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { indexedBlock: { increment: 5 } } });
    const moved = cursor.indexedBlock + 5n;

    // Held heads are a lower bound: a request without minBlock is answered at them, with no statement.
    statements.length = 0;
    expect(await ask()).toBe(cursor.indexedBlock.toString());
    expect(headsRead()).toHaveLength(0);
    // At or below the held heads: still none.
    expect(await ask(cursor.indexedBlock)).toBe(cursor.indexedBlock.toString());
    expect(headsRead()).toHaveLength(0);

    // Above them: each subgraph the request reaches reads the heads afresh, and holds the new ones.
    expect(await ask(moved)).toBe(moved.toString());
    expect(headsRead()).toHaveLength(3);
    statements.length = 0;
    expect(await ask()).toBe(moved.toString());
    expect(headsRead()).toHaveLength(0);
  });
});

describe("betResults with repeated ids", () => {
  const { statements, params, stack } = stackLoggingStatements(600_000);
  it("reads each distinct id once, in one statement, and answers every position in order", async () => {
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId status result { outcome } } }`;
    const ids = ["7", "3", "7", "7", "999999", "3", "999999"];
    await stack().gql(query, { ids: ["1"] }); // warms the process-wide network directory
    statements.length = 0;
    params.length = 0;
    const { data, errors } = await stack().gql<{ betResults: ({ betId: string; status: string } | null)[] }>(query, { ids });
    expect(errors).toBeUndefined();
    expect(data!.betResults.map((bet) => bet?.betId ?? null)).toEqual(["7", "3", "7", "7", null, "3", null]);
    expect(data!.betResults[2]).toEqual(data!.betResults[0]);
    expect(data!.betResults[5]).toEqual(data!.betResults[1]);

    const read = statements.flatMap((sql, i) => (sql.includes('"BetResult"') ? [params[i]!] : []));
    expect(read).toHaveLength(1);
    // The statement's bet ids: each distinct one once.
    const betIds = (JSON.parse(read[0]!) as unknown[]).find((value) => Array.isArray(value) && value.includes("999999")) as string[];
    expect([...betIds].sort()).toEqual(["3", "7", "999999"]);
  });
});

describe("betResults with a network snapshot that is never fresh", () => {
  // The snapshot is process-wide and lives a second: it may expire between the list's read and
  // its bets' `result`. The rows read by the list still answer: no second read per bet.
  const { statements: seen, stack } = stackLoggingStatements(0);

  it("reads bets and results in one statement, as with a fresh snapshot", async () => {
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { outcome won proof { piA } } } }`;
    const ids = Array.from({ length: 100 }, (_, i) => String(i + 1));
    for (let i = 0; i < 3; i++) {
      seen.length = 0;
      const { data, errors } = await stack().gql<{ betResults: ({ betId: string; result: unknown } | null)[] }>(query, { ids });
      expect(errors).toBeUndefined();
      expect(data!.betResults.filter((bet) => bet?.result).length).toBeGreaterThan(50);
      expect(
        seen.filter((sql) => sql.includes('"BetResult"')),
        seen.join("\n---\n"),
      ).toHaveLength(1);
    }
  });
});

describe("a proof's solidityCalldata", () => {
  // ~850 bytes a proof, more than the rest of it: read only for operations that can select it.
  const { statements, params, stack } = stackLoggingStatements(600_000);
  /** Whether each results statement of `query` read the calldata (its last parameter), and the answer. */
  const reads = async (query: string, variables: Record<string, unknown>) => {
    statements.length = 0;
    params.length = 0;
    const answer = await stack().gql<Record<string, unknown>>(query, variables);
    expect(answer.errors).toBeUndefined();
    const read = statements.flatMap((sql, i) => (sql.includes('"BetResult"') ? [(JSON.parse(params[i]!) as unknown[]).at(-1)] : []));
    return { read, data: answer.data! };
  };
  const ids = Array.from({ length: 40 }, (_, i) => String(i + 1));

  it("is not read for a betResults, betResult or entity fetch that does not ask for it", async () => {
    await stack().gql(`{ networkConfigs { name } }`); // warms the network directory
    const list = await reads(`query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { proof { piA verified } } } }`, { ids });
    expect(list.read).toEqual([false]);
    const one = await reads(`query ($id: UInt256!) { betResult(chainId: 31337, betId: $id) { result { outcome } } }`, { id: "1" });
    expect(one.read).toEqual([false]);
    const page = await reads(`query ($w: Address!) { playerBets(wallet: $w, first: 20) { nodes { result { proof { piA } } } } }`, {
      w: stack().fixtures.whale,
    });
    expect(page.read).toEqual([false]);
  });

  it("is read, and answered as stored, when the operation selects it", async () => {
    type Answer = { betResults: ({ betId: string; result: { proof: { calldata: string } } | null } | null)[] };
    const asked = await reads(
      `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { proof { calldata: solidityCalldata } } } }`,
      {
        ids,
      },
    );
    expect(asked.read).toEqual([true]);
    const stored = await stack().db.prisma.betResult.findMany({ where: { chainId: 31337n }, select: { betId: true, solidityCalldata: true } });
    const byId = new Map(stored.map((row) => [row.betId.toFixed(0), row.solidityCalldata]));
    const answered = (asked.data as Answer).betResults.filter((bet) => bet?.result);
    expect(answered.length).toBeGreaterThan(10);
    for (const bet of answered) expect(bet!.result!.proof.calldata).toBe(byId.get(bet!.betId));
  });
});
