import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { openDatabase, type Database } from "./db.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";

// A pool keeps the connections it opened. One that closed its idle connections (the driver's
// default, after 10 s) opened them again at the next burst: a new backend, its catalog caches
// and every prepared statement again, tens of milliseconds on a request's path. At a moderate
// rate that was the p99 of every bench:gateways open-loop run ("new pg sessions 10").

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const APP = "bet-api-pool-test";
const POOL_SIZE = 3;
const IDLE_MS = 200;

describe.skipIf(!onPostgres)("the PostgreSQL pool (PostgreSQL)", () => {
  let test: TestDatabase;
  let db: Database;
  let admin: pg.Client;
  beforeAll(async () => {
    test = await createTestDatabase();
    db = await openDatabase({ url: test.url, poolSize: POOL_SIZE, applicationName: APP, idleTimeoutMs: IDLE_MS });
    admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.close();
    await test?.close();
  });

  const connections = async () =>
    Number(
      (await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [APP]))
        .rows[0]?.n,
    );

  it("keeps every connection a burst opened after they sit idle past the idle timeout", async () => {
    await Promise.all(Array.from({ length: POOL_SIZE }, () => db.prisma.$queryRaw`SELECT pg_sleep(0.1)::text AS slept`));
    expect(await connections()).toBe(POOL_SIZE);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 5));
    expect(await connections()).toBe(POOL_SIZE);
  });
});
