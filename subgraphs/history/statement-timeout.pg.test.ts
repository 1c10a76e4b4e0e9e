import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { startTestStack, type TestStack } from "../../test/stack.ts";

// Every statement of the subgraphs runs under a statement timeout. A statement PostgreSQL cancels
// is answered as QUERY_TIMEOUT, with no SQL, file path or Prisma call in the message. PGlite has no
// statement timeout (one embedded connection; documented as a no-op), so this runs on PostgreSQL.

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const TIMEOUT_MS = 300;

describe.skipIf(!onPostgres)("statement timeout (PostgreSQL)", () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ bets: 40 }, { statementTimeoutMs: TIMEOUT_MS, production: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  const PAGE = `query ($w: Address!) { playerBets(wallet: $w, first: 5, filter: { game: "dice" }) { totalCount nodes { betId } } }`;

  it("answers a statement that runs past the timeout as QUERY_TIMEOUT, without internals", async () => {
    expect(t.db.url).toBeDefined();
    // Hold a lock every read of "Bet" waits for: the read runs until the timeout cancels it.
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query('LOCK TABLE "Bet" IN ACCESS EXCLUSIVE MODE');
      const started = performance.now();
      const { data, errors } = await t.gql(PAGE, { w: t.fixtures.whale });
      const elapsed = performance.now() - started;
      expect(data).toBeNull();
      expect(errors?.[0]?.extensions?.code).toBe("QUERY_TIMEOUT");
      expect(errors?.[0]?.message).not.toMatch(/prisma|invocation|\.ts|SELECT|canceling|Bet"/i);
      expect(elapsed).toBeLessThan(TIMEOUT_MS * 10);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
    }
  });

  it("answers normally once the statement fits in the timeout", async () => {
    const { data, errors } = await t.gql<{ playerBets: { totalCount: number } }>(PAGE, { w: t.fixtures.whale });
    expect(errors).toBeUndefined();
    expect(data?.playerBets.totalCount).toBeGreaterThanOrEqual(0);
  });
});
