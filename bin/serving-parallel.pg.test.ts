import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import type { Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { openConfiguredDatabase, openCsvExportReads } from "./wiring.ts";

// The expensive lane (and the CSV pool) bound how many statements run at once, one backend each.
// PostgreSQL's parallel query would give each of those statements up to
// max_parallel_workers_per_gather more processes (2 by default): a whale's filtered count ran as
// 3 processes, so the lane's 2 statements held 6 on a 2-core host and starved every cheap read
// (issue 21, the first second of an attack). The serving side's connections run them serially.

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";

async function parallelWorkers(db: Database): Promise<string | undefined> {
  const rows = await db.prisma.$queryRaw<{ max_parallel_workers_per_gather: string }[]>`SHOW max_parallel_workers_per_gather`;
  return rows[0]?.max_parallel_workers_per_gather;
}

describe.runIf(onPostgres)("the serving side's statements run without parallel workers (PostgreSQL)", () => {
  let test: TestDatabase;
  const opened: Database[] = [];
  beforeAll(async () => {
    test = await createTestDatabase();
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await test?.close();
  });

  const config = () => loadConfig(["shared", "gateway"], { DATABASE_URL: test.url, DATABASE_MIGRATE_ON_START: "false" });

  it("a subgraph's pool (statement timeout on: what the expensive lane runs on)", async () => {
    const db = await openConfiguredDatabase(config(), silentLogger(), { migrate: false, statementTimeout: true });
    opened.push(db);
    expect(await parallelWorkers(db)).toBe("0");
  });

  it("the CSV exports' pool", async () => {
    const primary = await openConfiguredDatabase(config(), silentLogger(), { migrate: false });
    opened.push(primary);
    const csv = await openCsvExportReads(config(), primary, silentLogger());
    try {
      expect(await parallelWorkers(csv.db)).toBe("0");
    } finally {
      await csv.close();
    }
  });

  it("the indexer's and migrations' connections keep the server's setting (control)", async () => {
    const db = await openConfiguredDatabase(config(), silentLogger(), { migrate: false });
    opened.push(db);
    expect(await parallelWorkers(db)).not.toBe("0");
  });
});
