import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../prisma/generated/client.ts";
import { betCountDrift } from "../../test/bet-counts.ts";
import { startTestStack, type TestStack } from "../../test/stack.ts";
import { testConfig } from "../../test/config.ts";

// playerBets.totalCount against COUNT(*) while bets are written the ways the indexer writes them:
// multi-row INSERT … ON CONFLICT DO UPDATE (new bets, settlements, reverts to PENDING), DELETE of
// a reorg's bets, plain UPDATEs, TRUNCATE. The chainId / status filters are answered from the
// trigger-maintained PlayerBetCount; game and time ranges still count rows.

type Status = "PENDING" | "SETTLED" | "REFUNDED";
interface Filter {
  chainId?: number;
  status?: Status[];
  game?: string;
  placedFrom?: string;
}
interface BetRow {
  chainId: number;
  betId: number;
  player: string;
  status: Status;
}

const FRESH_WALLET = "0x00000000000000000000000000000000000c0de5";
const FIRST_NEW_ID = 10_000_000;
const FILTERS: Record<string, Filter> = {
  all: {},
  localnet: { chainId: 31337 },
  devnet: { chainId: 1337 },
  pending: { status: ["PENDING"] },
  done: { status: ["SETTLED", "REFUNDED"] },
  localnetPending: { chainId: 31337, status: ["PENDING"] },
  devnetSettledRefunded: { chainId: 1337, status: ["REFUNDED", "SETTLED"] },
  dice: { game: "dice" },
  localnetDiceSettled: { chainId: 31337, status: ["SETTLED"], game: "dice" },
  recent: { placedFrom: "1700000500" },
};

/** What the indexer's upsertBets does, reduced to the columns that matter here. `$1`: jsonb array of BetRow. */
const UPSERT_BETS = `
  INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                     "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
  SELECT (e->>'chainId')::bigint, (e->>'betId')::numeric, e->>'player', '0x0', 1, 'dice', 'c', 's', (e->>'status')::"BetStatus",
         (e->>'betId')::bigint, 0, 'h', 't', 1700000000 + (e->>'betId')::bigint, (e->>'betId')::bigint
  FROM jsonb_array_elements($1::jsonb) AS r(e)
  ON CONFLICT ("chainId", "betId") DO UPDATE SET player = EXCLUDED.player, status = EXCLUDED.status, "lastChangeBlock" = EXCLUDED."lastChangeBlock" + 1`;

const statements: string[] = [];
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 400, whaleShare: 0.5, provenLimit: 5, outbox: false }, { onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await t?.close();
});

const upsert = (rows: BetRow[]) => t.db.prisma.$executeRawUnsafe(UPSERT_BETS, JSON.stringify(rows));
const newBets = (count: number, from: number, chainId: number, player: string): BetRow[] =>
  Array.from({ length: count }, (_, k) => ({ chainId, betId: from + k, player, status: "PENDING" }));
const idList = (rows: BetRow[]) => rows.map((r) => r.betId).join(", ");

function betWhere(wallet: string, filter: Filter): Prisma.BetWhereInput {
  return {
    player: wallet,
    ...(filter.chainId != null ? { chainId: BigInt(filter.chainId) } : {}),
    ...(filter.status ? { status: { in: filter.status } } : {}),
    ...(filter.game != null ? { game: filter.game } : {}),
    ...(filter.placedFrom != null ? { placedAt: { gte: BigInt(filter.placedFrom) } } : {}),
  };
}

/** totalCount of every filter in FILTERS for `wallet`, in one request. */
async function totals(wallet: string): Promise<Record<string, number>> {
  const names = Object.keys(FILTERS);
  const query = `query ($w: Address!, ${names.map((n) => `$${n}: PlayerBetsFilter`).join(", ")}) {
    ${names.map((n) => `${n}: playerBets(wallet: $w, filter: $${n}, first: 1) { totalCount }`).join("\n")} }`;
  const response = await t.gql<Record<string, { totalCount: number }>>(query, { w: wallet, ...FILTERS });
  expect(response.errors).toBeUndefined();
  return Object.fromEntries(names.map((n) => [n, response.data![n]!.totalCount]));
}

/** Every filter's totalCount equals COUNT(*) for both wallets, and every counter row is exact. */
async function expectExact(): Promise<void> {
  for (const wallet of [t.fixtures.whale, FRESH_WALLET]) {
    const expected: Record<string, number> = {};
    for (const [name, filter] of Object.entries(FILTERS)) expected[name] = await t.db.prisma.bet.count({ where: betWhere(wallet, filter) });
    expect(await totals(wallet), wallet).toEqual(expected);
  }
  expect(await betCountDrift(t.db)).toEqual([]);
}

describe("playerBets.totalCount from the per-wallet counters", () => {
  it("equals COUNT(*) for every filter on the seeded data (counters backfilled by the seed's inserts)", async () => {
    const whaleBets = await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } });
    expect(whaleBets).toBeGreaterThan(100);
    const statuses = await t.db.prisma.bet.groupBy({ by: ["chainId", "status"], where: { player: t.fixtures.whale }, _count: true });
    expect(statuses.length).toBeGreaterThanOrEqual(5); // both chains, several statuses: the filters discriminate
    await expectExact();
  });

  it("reads PlayerBetCount (one statement, no row count) for chainId / status filters, and counts rows with game or placedFrom", async () => {
    const ask = async (filter: Filter) => {
      statements.length = 0;
      const response = await t.gql(`query ($w: Address!, $f: PlayerBetsFilter) { playerBets(wallet: $w, filter: $f, first: 1) { totalCount } }`, {
        w: t.fixtures.whale,
        f: filter,
      });
      expect(response.errors).toBeUndefined();
      const countsBets = statements.filter((sql) => /count\(/i.test(sql) && /"Bet"/.test(sql));
      const readsCounters = statements.filter((sql) => sql.includes('"PlayerBetCount"'));
      return { countsBets: countsBets.length, readsCounters: readsCounters.length };
    };
    for (const filter of [{}, { chainId: 31337 }, { status: ["SETTLED"] }, { chainId: 1337, status: ["PENDING", "REFUNDED"] }] as Filter[]) {
      expect(await ask(filter), JSON.stringify(filter)).toEqual({ countsBets: 0, readsCounters: 1 });
    }
    for (const filter of [{ game: "dice" }, { chainId: 31337, placedFrom: "1700000500" }] as Filter[]) {
      expect(await ask(filter), JSON.stringify(filter)).toEqual({ countsBets: 1, readsCounters: 0 });
    }
  });

  it("stays equal to COUNT(*) through inserts, settlements, refunds, reverts, reorg deletions and moved rows", async () => {
    // New bets in one statement, both chains, the whale and a wallet with no bets yet.
    const local = newBets(20, FIRST_NEW_ID, 31337, t.fixtures.whale);
    const dev = newBets(10, FIRST_NEW_ID, 1337, FRESH_WALLET);
    await upsert([...local, ...dev]);
    await expectExact();

    // Settlements through ON CONFLICT DO UPDATE (PENDING → SETTLED), refunds through a plain UPDATE.
    await upsert([...local.slice(0, 8), ...dev.slice(0, 4)].map((b) => ({ ...b, status: "SETTLED" })));
    await t.db.prisma.$executeRawUnsafe(`UPDATE "Bet" SET status = 'REFUNDED' WHERE "chainId" = 31337 AND "betId" IN (${idList(local.slice(10, 14))})`);
    await expectExact();

    // A reorg: some settlements undone (back to PENDING), the newest placements deleted.
    await upsert(local.slice(0, 3).map((b) => ({ ...b, status: "PENDING" })));
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "Bet" WHERE "chainId" = 31337 AND "betId" IN (${idList(local.slice(5, 16))})`);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "Bet" WHERE "chainId" = 1337 AND "betId" IN (${idList(dev.slice(2, 6))})`);
    await expectExact();

    // An upsert that changes neither player, chain nor status; rows moving to another player and chain.
    await upsert(local.slice(16));
    await t.db.prisma.$executeRawUnsafe(`UPDATE "Bet" SET player = '${FRESH_WALLET}' WHERE "chainId" = 31337 AND "betId" IN (${idList(local.slice(16, 18))})`);
    await t.db.prisma.$executeRawUnsafe(
      `UPDATE "Bet" SET "chainId" = 1337, "betId" = "betId" + 1000 WHERE "chainId" = 31337 AND "betId" = ${local[19]!.betId}`,
    );
    await expectExact();
    expect(await t.db.prisma.bet.count({ where: { player: FRESH_WALLET } })).toBe(10 - 4 + 2);
  });

  it.runIf(testConfig.TEST_DB === "postgres")(
    "lets two chains' writers add bets of one wallet concurrently; one chain's writers queue on its counter row without losing a count",
    async () => {
      const connect = async () => {
        const client = new pg.Client({ connectionString: t.db.url });
        await client.connect();
        // Waiting on a lock for this long is a failure, not a slow pass.
        await client.query("SET lock_timeout = '30s'");
        return client;
      };
      const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
      try {
        const before = await t.db.prisma.playerBetCount.findMany({ where: { player: t.fixtures.whale, status: "PENDING" } });
        await a.query("BEGIN");
        await a.query(UPSERT_BETS, [JSON.stringify(newBets(3, FIRST_NEW_ID + 100, 31337, t.fixtures.whale))]);
        // Another chain, same wallet, while A holds its counter row: goes through and commits.
        await b.query("BEGIN");
        await b.query(UPSERT_BETS, [JSON.stringify(newBets(2, FIRST_NEW_ID + 100, 1337, t.fixtures.whale))]);
        await b.query("COMMIT");

        // Same chain, same wallet: waits for A's counter row (a second writer of one chain is already
        // refused by the indexer's cursor lock), then adds on top of A's count.
        const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
        const sameChain = c.query(UPSERT_BETS, [JSON.stringify(newBets(4, FIRST_NEW_ID + 200, 31337, t.fixtures.whale))]);
        sameChain.catch(() => undefined); // awaited below; a failure while polling must not go unhandled
        const deadline = Date.now() + 20_000;
        for (;;) {
          const { rows } = await b.query<{ wait: string | null }>("SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1", [pid]);
          if (rows[0]?.wait === "Lock") break;
          if (Date.now() > deadline) throw new Error("the same-chain writer never waited for the counter row");
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await a.query("COMMIT");
        await sameChain;

        const after = await t.db.prisma.playerBetCount.findMany({ where: { player: t.fixtures.whale, status: "PENDING" } });
        const of = (rows: typeof before, chainId: bigint) => Number(rows.find((r) => r.chainId === chainId)?.bets ?? 0n);
        expect(of(after, 31337n) - of(before, 31337n)).toBe(3 + 4);
        expect(of(after, 1337n) - of(before, 1337n)).toBe(2);
        await expectExact();
      } finally {
        await Promise.all([a, b, c].map((client) => client.end().catch(() => undefined)));
      }
    },
  );

  it("empties the counters when Bet is truncated", async () => {
    expect(await t.db.prisma.playerBetCount.count()).toBeGreaterThan(0);
    await t.db.prisma.$executeRawUnsafe(`TRUNCATE "Bet" CASCADE`);
    expect(await t.db.prisma.playerBetCount.count()).toBe(0);
    await expectExact();
  });
});
