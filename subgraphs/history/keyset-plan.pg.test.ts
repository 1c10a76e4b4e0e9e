// The plans of the SQL `playerBets` really sends (captured from the resolver through Prisma), on
// PostgreSQL: a page is an index range read in the page order — no Sort, and no wallet rows read
// only to be thrown away — without a filter, with a chainId filter and with one status. A whale's
// newer bets on another network must not be skipped one by one to reach a page of this network's
// bets, nor its whole history read to find its few PENDING or REFUNDED ones. (The page statement
// also sums the wallet's counters for totalCount: the scan checked is the one over "Bet".)
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureSql } from "../../bench/common.ts";
import { capturePage } from "../../bench/scale-explain.ts";
import { betPage } from "./data.ts";
import { createTestDatabase, type TestDatabase } from "../../test/db.ts";
import { testConfig } from "../../test/config.ts";
import { nodesOf, type PlanNode } from "../../test/plans.ts";

const WHALE = `0x${"ab".repeat(20)}`;
const NEWER_CHAIN = 1; // the whale's 10 000 newest bets
const OLDER_CHAIN = 2; // 10 000 bets in earlier blocks

describe.runIf(testConfig.TEST_DB === "postgres")("playerBets plans (PostgreSQL)", () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // ANALYZE reads all 40 000 rows, not a random sample of 30 000: plans that do not vary by run.
    await client.query(`SET default_statistics_target = 400`);
    // Nor may autovacuum re-ANALYZE (by the server's sample) or change the visibility map mid-test.
    await client.query(`ALTER TABLE "Bet" SET (autovacuum_enabled = off)`);
    for (const chainId of [NEWER_CHAIN, OLDER_CHAIN]) {
      await client.query(
        `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES ($1, $2, 1, '{}', '00')`,
        [chainId, `net${chainId}`],
      );
    }
    // The whale, plus 200 other wallets so the index is not the whale's alone.
    await client.query(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT CASE WHEN i > 10000 THEN ${NEWER_CHAIN} ELSE ${OLDER_CHAIN} END, i, '${WHALE}', '0x0', 1, 'dice', 'c', 's',
             (CASE WHEN i % 2000 = 0 THEN 'REFUNDED' WHEN i > 19990 THEN 'PENDING' ELSE 'SETTLED' END)::"BetStatus",
             i, 0, 'h', 't', i, i
        FROM generate_series(1, 20000) AS i`);
    await client.query(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT 1 + i % 2, 100000 + i, '0x' || lpad(to_hex(i % 200), 40, '0'), '0x0', 1, 'dice', 'c', 's', 'SETTLED',
             i, 1, 'h', 't', i, i
        FROM generate_series(1, 20000) AS i`);
    await client.query(`VACUUM (ANALYZE) "Bet"`);
  });
  afterAll(async () => {
    await client?.end();
    await db?.close();
  });

  async function explain(filter?: { chainId?: number; status?: string[] }) {
    const query = await capturePage(db.url!, WHALE, 50, null, false, filter);
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.sql}`, query.params);
    return nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
  }

  it("reads the first page of the whale's bets on one network from that network's rows only", async () => {
    const nodes = await explain({ chainId: OLDER_CHAIN });
    const scan = nodes.find((node) => node["Index Name"]?.startsWith("Bet_"));
    expect(scan?.["Index Name"]).toBe("Bet_player_chainId_placedBlock_placedLogIndex_idx");
    expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
    // Without that index: the 10 000 newer bets of the other network are read and dropped first.
    expect(scan?.["Rows Removed by Filter"] ?? 0).toBeLessThan(100);
    expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(51);
  });

  it("reads the first page across networks from the wallet's keyset index, in order", async () => {
    const nodes = await explain();
    const scan = nodes.find((node) => node["Index Name"]?.startsWith("Bet_"));
    expect(scan?.["Index Name"]).toBe("Bet_player_placedBlock_placedLogIndex_chainId_idx");
    expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
    expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(51);
  });

  it("reads a wallet page joined to its networks and results, with its count, in page order: the keyset index, no Sort, a page of rows", async () => {
    const [query] = await captureSql(db.url!, (capturing) =>
      betPage(capturing, { wallet: WHALE }, { direction: "DESC", take: 51, joins: { network: true, result: true }, wide: false, counted: true }),
    );
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${query!.sql}`, query!.params);
    const nodes = nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
    const scan = nodes.find((node) => node["Index Name"]?.startsWith("Bet_player"));
    expect(scan?.["Index Name"]).toBe("Bet_player_placedBlock_placedLogIndex_chainId_idx");
    expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
    expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(51);
  });

  it("reads a page of one status from that status's rows only: the whale's 10 REFUNDED among 20 000", async () => {
    const nodes = await explain({ status: ["REFUNDED"] });
    const scan = nodes.find((node) => node["Index Name"]?.startsWith("Bet_"));
    expect(scan?.["Index Name"]).toBe("Bet_player_status_placedBlock_placedLogIndex_chainId_idx");
    expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
    expect(scan?.["Rows Removed by Filter"] ?? 0).toBe(0);
    expect(scan?.["Actual Rows"]).toBe(10);
  });
});
