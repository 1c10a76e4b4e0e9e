// PostgreSQL only (a `.pg.test.ts` file): the plans of the statements the counter triggers run inside
// the indexer's writes, read with auto_explain (PGlite has no auto_explain).
//
// A PL/pgSQL trigger plans each statement once per session and keeps the plan; a statement over
// transition tables is planned with the row counts they held that first time. The indexer's first
// commit fires the "Bet" UPDATE triggers with empty tables (its upsert updates nothing, its head
// advance claims nothing), so a plan that joins new_bets to old_bets was a nested loop, and the
// backfill's next commit (thousands of refunds, then thousands of bets marked final) rescanned one
// transition table, spilled to a temp file, once per row of the other: quadratic (issue 24: 17–68 s
// for one commit). The test warms a session the same way, then updates many bets, and requires that
// no statement run by a trigger scanned a transition table more than once.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testConfig } from "../test/config.ts";

const BETS = 1_000;
const CHAIN = 31337;

const UPSERT = `
  INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                     "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
  SELECT ${CHAIN}, i, '0x' || lpad(to_hex(i % 50), 40, '0'), '0x${"0".repeat(40)}', 1, 'dice', 'c', 's', $2::"BetStatus",
         i, 0, 'h', 't' || i, 1700000000 + i, $3
    FROM generate_series(1, $1::int) AS i
  ON CONFLICT ("chainId", "betId") DO UPDATE SET status = EXCLUDED.status, "lastChangeBlock" = EXCLUDED."lastChangeBlock"`;

describe.runIf(testConfig.TEST_DB === "postgres")("counter triggers' plans on a warmed session (PostgreSQL)", () => {
  let db: TestDatabase;
  let client: pg.Client;
  const plans: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    client.on("notice", (notice) => {
      if (notice.message?.includes("plan:")) plans.push(notice.message);
    });
    await client.query(
      `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (${CHAIN}, 'anvil', 1, '{}', '00')`,
    );
    // The first commit's shape: new bets through the upsert (its UPDATE triggers see no rows), and a
    // head advance that claims nothing.
    await client.query(UPSERT, [BETS, "PENDING", 1]);
    await client.query(`UPDATE "Bet" SET "finalizedUpdateBlock" = "lastChangeBlock" WHERE "chainId" = ${CHAIN} AND false`);
    await client.query(`LOAD 'auto_explain'`);
    for (const setting of ["log_min_duration = 0", "log_analyze = on", "log_nested_statements = on"]) {
      await client.query(`SET auto_explain.${setting}`);
    }
    await client.query(`SET client_min_messages = log`);
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await db?.close();
  });

  it("scans each transition table once when the next commit refunds every bet and marks them final", async () => {
    await client.query(UPSERT, [BETS, "REFUNDED", 2]);
    await client.query(`UPDATE "Bet" SET "finalizedUpdateBlock" = "lastChangeBlock" WHERE "chainId" = ${CHAIN} AND "finalizedUpdateBlock" IS NULL`);
    await client.query(`RESET client_min_messages`);

    const scans = plans.flatMap((plan) => [...plan.matchAll(/Named Tuplestore Scan .*\(actual [^)]*loops=(\d+)\)/g)].map((m) => Number(m[1])));
    // The triggers did read the transition tables (the assertion below is about something that ran).
    expect(scans.length).toBeGreaterThan(0);
    expect(Math.max(...scans)).toBe(1);
    // And the counters saw the refunds.
    const counts = await client.query<{ refunded: string }>(`SELECT "refundedBets"::text AS refunded FROM "FairnessCounter" WHERE "chainId" = ${CHAIN}`);
    expect(counts.rows).toEqual([{ refunded: String(BETS) }]);
  });
});
