// The statement a CSV export page sends (GET /wallets/{address}/bets.csv, walletBetsPage), on
// PostgreSQL with enough rows for the planner to choose as it would in production: one statement per
// page, the wallet's bets from its keyset index and each bet's result through the BetResult key. The
// relation load Prisma sent for the results (`chainId IN (…1 000 values) AND betId IN (…1 000)`) was
// planned as a parallel scan of every result: at 1 M bets 0.7 s of three processes per 1 000-row page,
// which a crowd of exports turned into the whole machine's CPU.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/db.ts";
import { testConfig } from "../../test/config.ts";
import { nodesOf, type PlanNode } from "../../test/plans.ts";
import { walletBetsPage } from "./data.ts";

const WALLET = `0x${"cd".repeat(20)}`;
const CHAIN = 1;
const WALLET_BETS = 3_000;
const OTHER_BETS = 60_000;

describe.runIf(testConfig.TEST_DB === "postgres")("CSV export pages (PostgreSQL)", () => {
  let db: TestDatabase;
  let client: pg.Client;
  const sent: { sql: string; params: string }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ onQuery: (sql, params) => sent.push({ sql, params }) });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES ($1, 'net', 1, '{}', '00')`,
      [CHAIN],
    );
    // The wallet's bets interleaved with 200 other wallets' (every 21st bet is the wallet's), each
    // settled but every 7th, which is pending and has no result.
    await client.query(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT ${CHAIN}, i, CASE WHEN i % 21 = 0 AND i <= ${WALLET_BETS * 21} THEN '${WALLET}' ELSE '0x' || lpad(to_hex(i % 200), 40, '0') END,
             '0x0', 1, 'dice', 'c', 's', (CASE WHEN i % 7 = 0 THEN 'PENDING' ELSE 'SETTLED' END)::"BetStatus", i, 0, 'h', 't', i, i
        FROM generate_series(1, ${WALLET_BETS * 21 + OTHER_BETS}) AS i`);
    await client.query(`
      INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
      SELECT "chainId", "betId", 1, "betId" % 2 = 0, "betId" * 2, '{}', '{}', '0x', "betId" % 3 <> 0 FROM "Bet" WHERE status = 'SETTLED'`);
    await client.query(`VACUUM (ANALYZE) "Bet"`);
    await client.query(`VACUUM (ANALYZE) "BetResult"`);
  }, 120_000);
  afterAll(async () => {
    await client?.end();
    await db?.close();
  });

  it("reads a page of 1 000 bets with their results in one statement, each result through its key", async () => {
    const first = await walletBetsPage(db, { wallet: WALLET, take: 1_000 });
    const last = first.at(-1)!;
    sent.length = 0;
    const page = await walletBetsPage(db, {
      wallet: WALLET,
      take: 1_000,
      after: { placedBlock: last.placedBlock, logIndex: last.placedLogIndex, chainId: last.chainId },
    });

    // The second page: the wallet's bets 1 001–2 000 from the newest, each with its result or none.
    expect(page.map((bet) => Number(bet.betId))).toEqual(Array.from({ length: 1_000 }, (_, k) => (WALLET_BETS - 1_000 - k) * 21));
    for (const bet of page) {
      const id = Number(bet.betId);
      if (id % 7 === 0) expect(bet.result).toBeNull();
      else expect({ ...bet.result, payout: bet.result?.payout.toFixed(0) }).toEqual({ won: id % 2 === 0, payout: String(id * 2), verified: id % 3 !== 0 });
    }

    expect(sent).toHaveLength(1);
    const [{ sql, params }] = sent as [{ sql: string; params: string }];
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, JSON.parse(params));
    const nodes = nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
    const scans = nodes.filter((node) => /Scan/.test(node["Node Type"]));
    expect(scans.map((node) => node["Node Type"])).not.toContain("Seq Scan");
    expect(scans.find((node) => node["Index Name"] === "BetResult_pkey")).toBeDefined();
  }, 60_000);
});
