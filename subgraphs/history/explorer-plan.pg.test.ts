// The plans of the SQL `bets` really sends (captured from the resolver through Prisma), on
// PostgreSQL: with no filter and under each single filter (chainId, one status, game, player,
// token, a placed-time range, and a time range with one of them), page 1 and page 100 are both an
// index range read in page order — no Sort, and no rows read only to be thrown away — so a deep
// page costs what the first costs.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureExplorerPage, explorerCursorAfter } from "../../bench/scale-explain.ts";
import { createTestDatabase, type TestDatabase } from "../../test/db.ts";
import { testConfig } from "../../test/config.ts";
import { nodesOf, type PlanNode } from "../../test/plans.ts";

const BETS = 30_000;
const PAGE = 50;
const DEEP = 99 * PAGE; // page 100
const WALLET = `0x${"0".repeat(37)}007`;
const TOKEN = `0x${"0".repeat(38)}aa`;

describe.runIf(testConfig.TEST_DB === "postgres")("bets plans (PostgreSQL)", () => {
  let db: TestDatabase;
  let client: pg.Client;
  let from: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // ANALYZE reads every row, not a random sample of 30 000 (of 36 000): with a sample the token's
    // frequency wobbled enough for page 100 under token to flip to a bitmap read and a Sort in about
    // one run of five. The plans under test are those of the table as it is.
    await client.query(`SET default_statistics_target = 400`);
    // Nor may autovacuum re-ANALYZE (by the server's sample) or change the visibility map mid-test.
    await client.query(`ALTER TABLE "Bet" SET (autovacuum_enabled = off)`);
    for (const chainId of [1, 2, 3]) {
      await client.query(
        `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES ($1, $2, 1, '{}', '00')`,
        [chainId, `net${chainId}`],
      );
    }
    // 200 wallets, three networks, three games, one token in ten, few PENDING and REFUNDED bets;
    // several bets share each second (placedAt ties within and across networks).
    await client.query(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT 1 + i % 3, i, '0x' || lpad(to_hex(i % 200), 40, '0'),
             CASE WHEN i % 10 = 0 THEN '${TOKEN}' ELSE '0x${"0".repeat(40)}' END, 1,
             (ARRAY['dice', 'coinflip', 'wheel'])[1 + (i / 7) % 3], 'c', 's',
             (CASE WHEN i % 97 = 0 THEN 'REFUNDED' WHEN i > ${BETS - 300} THEN 'PENDING' ELSE 'SETTLED' END)::"BetStatus",
             i, 0, 'h', 't' || i, 1700000000 + i / 4, i
        FROM generate_series(1, ${BETS}) AS i`);
    // Rare values: 6 000 bets of a game and of a token among 30 000, and a network whose bets are
    // all among the oldest.
    await client.query(
      `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (4, 'net4', 1, '{}', '00')`,
    );
    await client.query(`UPDATE "Bet" SET game = 'keno' WHERE "betId" % 5 = 1`);
    await client.query(`UPDATE "Bet" SET token = '0x${"0".repeat(38)}bb' WHERE "betId" % 5 = 2`);
    await client.query(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT 4, i, '0x' || lpad(to_hex(i % 200), 40, '0'), '0x${"0".repeat(40)}', 1, 'dice', 'c', 's', 'SETTLED',
             i, 0, 'h', 'u' || i, 1700000000 + i / 4, i
        FROM generate_series(1, 6000) AS i`);
    await client.query(`VACUUM (ANALYZE) "Bet"`);
    from = 1700000000 + BETS / 8;
  });
  afterAll(async () => {
    await client?.end();
    await db?.close();
  });

  async function explain(filter: Record<string, unknown> | undefined, deep: boolean) {
    const after = deep ? await explorerCursorAfter(db.url!, filter, DEEP) : null;
    if (deep) expect(after).not.toBeNull();
    const query = await captureExplorerPage(db.url!, { first: PAGE, after, filter });
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.sql}`, query.params);
    return nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
  }

  const cases: [string, () => Record<string, unknown> | undefined, string][] = [
    ["no filter", () => undefined, "Bet_placedAt_chainId_betId_idx"],
    ["chainId", () => ({ chainId: 2 }), "Bet_chainId_placedAt_betId_idx"],
    ["one status", () => ({ status: ["SETTLED"] }), "Bet_status_placedAt_chainId_betId_idx"],
    ["game", () => ({ game: "coinflip" }), "Bet_game_placedAt_chainId_betId_idx"],
    ["player", () => ({ player: WALLET }), "Bet_player_placedAt_chainId_betId_idx"],
    ["token", () => ({ token: TOKEN }), "Bet_token_placedAt_chainId_betId_idx"],
    ["placed-time range", () => ({ placedTo: String(1700000000 + BETS / 4 - BETS / 8) }), "Bet_placedAt_chainId_betId_idx"],
    ["game and a placed-time range", () => ({ game: "wheel", placedFrom: String(from) }), "Bet_game_placedAt_chainId_betId_idx"],
  ];

  it.each(cases)("reads page 1 and page 100 under %s from one index range in page order, touching as many rows", async (_name, filter, index) => {
    const touched: number[] = [];
    for (const deep of [false, true]) {
      const nodes = await explain(filter(), deep);
      const scan = nodes.find((node) => node["Index Name"] !== undefined);
      // The filter's own index, or — when the filter matches a third of the bets or more, spread
      // evenly — the unfiltered order's, reading about three rows per row of the page.
      expect([index, "Bet_placedAt_chainId_betId_idx"], `deep: ${deep}`).toContain(scan?.["Index Name"]);
      // Under one equality alone the statement leaves the planner only the filter's own index.
      const given = filter();
      if (given && given.placedFrom === undefined && given.placedTo === undefined) expect(scan?.["Index Name"]).toBe(index);
      expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
      expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(PAGE + 1);
      touched.push((scan?.["Actual Rows"] ?? 0) + (scan?.["Rows Removed by Filter"] ?? 0));
    }
    // Page 100 reads no more than page 1 does, give or take the rows sharing the cursor's second.
    expect(touched[1]).toBeLessThanOrEqual(touched[0]! * 1.2 + 20);
    expect(touched[0]).toBeLessThanOrEqual(4 * (PAGE + 1));
  });

  it.each([
    ["a rare status", { status: ["REFUNDED"] }, "Bet_status_placedAt_chainId_betId_idx"],
    ["a rare game", { game: "keno" }, "Bet_game_placedAt_chainId_betId_idx"],
    ["a rare token", { token: `0x${"0".repeat(38)}bb` }, "Bet_token_placedAt_chainId_betId_idx"],
    ["a network with old bets only", { chainId: 4 }, "Bet_chainId_placedAt_betId_idx"],
  ])("reads a page of %s from its own index, not by skipping the others", async (_name, filter, index) => {
    for (const deep of [false, true]) {
      const nodes = await explain(filter, deep);
      const scan = nodes.find((node) => node["Index Name"] !== undefined);
      expect(scan?.["Index Name"], `deep: ${deep}`).toBe(index);
      // Page 1 in index order. Deeper, the planner may prefer a bitmap read of the (few) rows left
      // below the cursor and a sort of those: still bounded by the cursor, never the newer rows.
      if (!deep) expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
      expect(scan?.["Rows Removed by Filter"] ?? 0).toBeLessThan(20);
    }
  });

  it("finds a transaction's bets from the tx-hash indexes", async () => {
    await client.query(`UPDATE "Bet" SET "settledTx" = 't42', "settledBlock" = 1, "settledBlockHash" = 'h', "settledAt" = 1 WHERE "betId" = 7`);
    await client.query(`ANALYZE "Bet"`);
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM "Bet" WHERE "chainId" = 1 AND ("placedTx" = 't42' OR "settledTx" = 't42' OR "refundedTx" = 't42')`,
    );
    const indexes = nodesOf(rows[0]!["QUERY PLAN"][0].Plan).map((node) => node["Index Name"]);
    expect(indexes).toEqual(expect.arrayContaining(["Bet_placedTx_idx", "Bet_settledTx_idx", "Bet_refundedTx_idx"]));
  });
});
