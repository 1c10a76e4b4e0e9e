import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../core/db.ts";
import { Prisma } from "./generated/client.ts";
import { MigrationError, readMigrations, sha256Hex, type MigrationRow } from "./migrate.ts";
import { prismaCliPath, prismaEnv, repoRoot } from "../scripts/prisma-cli.ts";
import { spawnChild } from "../test/spawn.ts";
import { createEmptyPostgresDatabase, createTestDatabase, databaseUrl, dropPostgresDatabase, type TestDatabase } from "../test/db.ts";
import { testConfig } from "../test/config.ts";
import { FAIRNESS_DRIFT_SQL } from "../test/fairness-counts.ts";
import { emptyTarget, migratedTarget, migrationsDirOf, postgresTarget } from "../test/migration-targets.ts";

const kind = testConfig.TEST_DB;
const migrations = readMigrations();
const names = migrations.map((m) => m.name);
const UINT256_MAX = (2n ** 256n - 1n).toString();

describe(`runtime migrator (${kind})`, () => {
  it("applies every migration to an empty database, and a second run is a no-op", async () => {
    const target = await emptyTarget();
    try {
      const first = await target.migrate();
      expect(first).toEqual({ applied: names, alreadyApplied: [] });
      const second = await target.migrate();
      expect(second).toEqual({ applied: [], alreadyApplied: names });
      const rows = await target.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations"`);
      expect(rows[0]!.n).toBe(names.length);
    } finally {
      await target.close();
    }
  });

  it("keeps Prisma's _prisma_migrations table: same columns, sha256 checksums, finished rows", async () => {
    const target = await migratedTarget();
    try {
      const columns = await target.query<{ column_name: string; data_type: string; is_nullable: string; character_maximum_length: number | null }>(
        `SELECT column_name, data_type, is_nullable, character_maximum_length
           FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      expect(columns).toEqual([
        { column_name: "id", data_type: "character varying", is_nullable: "NO", character_maximum_length: 36 },
        { column_name: "checksum", data_type: "character varying", is_nullable: "NO", character_maximum_length: 64 },
        { column_name: "finished_at", data_type: "timestamp with time zone", is_nullable: "YES", character_maximum_length: null },
        { column_name: "migration_name", data_type: "character varying", is_nullable: "NO", character_maximum_length: 255 },
        { column_name: "logs", data_type: "text", is_nullable: "YES", character_maximum_length: null },
        { column_name: "rolled_back_at", data_type: "timestamp with time zone", is_nullable: "YES", character_maximum_length: null },
        { column_name: "started_at", data_type: "timestamp with time zone", is_nullable: "NO", character_maximum_length: null },
        { column_name: "applied_steps_count", data_type: "integer", is_nullable: "NO", character_maximum_length: null },
      ]);
      const rows = await target.query<MigrationRow>(`SELECT * FROM "_prisma_migrations" ORDER BY started_at`);
      expect(rows.map((r) => r.migration_name)).toEqual(names);
      for (const [i, row] of rows.entries()) {
        expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(row.checksum).toBe(migrations[i]!.checksum);
        expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
        expect(row.logs).toBeNull();
        expect(row.rolled_back_at).toBeNull();
        expect(row.applied_steps_count).toBe(1);
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      }
      expect(sha256Hex(migrations[0]!.sql)).toBe(migrations[0]!.checksum);
    } finally {
      await target.close();
    }
  });

  it("refuses to run when an applied migration's file was modified (checksum mismatch)", async () => {
    const target = await migratedTarget();
    try {
      await target.query(`UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2`, ["0".repeat(64), names[0]]);
      const error = await target.migrate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).code).toBe("CHECKSUM_MISMATCH");
      expect((error as MigrationError).migration).toBe(names[0]);
      expect((error as Error).message).toContain(`Migration \`${names[0]}\` was modified after it was applied`);
      expect((error as Error).message).toContain(migrations[0]!.checksum);
    } finally {
      await target.close();
    }
  });

  it("refuses to run over a migration recorded as failed", async () => {
    const target = await migratedTarget();
    try {
      await target.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs, started_at) VALUES ($1, $2, $3, $4, now())`, [
        "00000000-0000-4000-8000-000000000000",
        "1".repeat(64),
        "29990101000000_broken",
        "boom",
      ]);
      await expect(target.migrate()).rejects.toMatchObject({ code: "FAILED_MIGRATION", migration: "29990101000000_broken" });
    } finally {
      await target.close();
    }
  });

  it("rolls a failing migration back entirely (no table, no row) and keeps the earlier ones", async () => {
    const dir = migrationsDirOf(migrations);
    const target = await migratedTarget();
    try {
      mkdirSync(join(dir, "29990101000000_ok"));
      writeFileSync(join(dir, "29990101000000_ok", "migration.sql"), `CREATE TABLE "Extra" ("id" INTEGER PRIMARY KEY);\n`);
      mkdirSync(join(dir, "29990102000000_bad"));
      writeFileSync(join(dir, "29990102000000_bad", "migration.sql"), `CREATE TABLE "Half" ("id" INTEGER);\nSELECT * FROM "does_not_exist";\n`);

      const error = await target.migrate({ migrationsDir: dir }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "APPLY_FAILED", migration: "29990102000000_bad" });
      expect((error as Error).message).toMatch(/does_not_exist/);

      const tables = await target.query<{ name: string | null }>(`SELECT to_regclass('"Extra"')::text AS name UNION ALL SELECT to_regclass('"Half"')::text`);
      expect(tables.map((t) => t.name)).toEqual(['"Extra"', null]);
      const rows = await target.query<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations" ORDER BY started_at`);
      expect(rows.map((r) => r.migration_name)).toEqual([...names, "29990101000000_ok"]);
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("backfills PlayerBetCount from the bets already there when its migration is applied, then keeps it with triggers", async () => {
    const counterMigration = names.findIndex((name) => name.endsWith("_player_bet_count"));
    expect(counterMigration).toBeGreaterThan(0);
    const dir = migrationsDirOf(migrations.slice(0, counterMigration));
    const target = await emptyTarget();
    try {
      await target.migrate({ migrationsDir: dir });
      await target.query(`INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256")
        VALUES (1, 'one', 1, '{}', '00'), (2, 'two', 1, '{}', '00')`);
      // 3 000 bets of 7 players on 2 chains in 3 statuses, before the counter exists.
      await target.query(`
        INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                           "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
        SELECT 1 + i % 2, i, 'p' || (i % 7), '0x0', 1, 'dice', 'c', 's', (ARRAY['PENDING', 'SETTLED', 'REFUNDED'])[1 + i % 3]::"BetStatus",
               i, 0, 'h', 't', i, i
          FROM generate_series(1, 3000) AS i`);

      expect(await target.migrate()).toEqual({ applied: names.slice(counterMigration), alreadyApplied: names.slice(0, counterMigration) });
      const drift = `
        SELECT count(*)::int AS n FROM (SELECT player, "chainId", status, count(*) AS n FROM "Bet" GROUP BY 1, 2, 3) AS b
        FULL JOIN "PlayerBetCount" AS c USING (player, "chainId", status) WHERE coalesce(b.n, 0) <> coalesce(c.bets, 0)`;
      const rows = await target.query<{ rows: number; bets: string }>(`SELECT count(*)::int AS rows, sum(bets)::text AS bets FROM "PlayerBetCount"`);
      expect(rows[0]).toEqual({ rows: 7 * 2 * 3, bets: "3000" });
      expect((await target.query<{ n: number }>(drift))[0]!.n).toBe(0);

      await target.query(`UPDATE "Bet" SET status = 'SETTLED' WHERE status = 'PENDING' AND "betId" % 5 = 0`);
      await target.query(`DELETE FROM "Bet" WHERE "betId" > 2500`);
      expect((await target.query<{ n: number }>(drift))[0]!.n).toBe(0);
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives the bets already there their Token rows when the tokens migration is applied", async () => {
    const tokensMigration = names.findIndex((name) => name.endsWith("_tokens"));
    expect(tokensMigration).toBeGreaterThan(0);
    const dir = migrationsDirOf(migrations.slice(0, tokensMigration));
    const target = await emptyTarget();
    try {
      await target.migrate({ migrationsDir: dir });
      await target.query(`INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256")
        VALUES (1, 'one', 1, '{}', '00'), (2, 'two', 1, '{}', '00')`);
      const native = "0x0000000000000000000000000000000000000000";
      await target.query(`
        INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                           "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
        SELECT 1 + i % 2, i, 'p', CASE WHEN i % 3 = 0 THEN '0x00000000000000000000000000000000000000aa' ELSE '${native}' END, 1, 'dice', 'c', 's',
               'PENDING', i, 0, 'h', 't', i, i
          FROM generate_series(1, 30) AS i`);
      await target.migrate();
      const tokens = await target.query<{ chainId: string; address: string; symbol: string; decimals: number }>(
        `SELECT "chainId"::text AS "chainId", address, symbol, decimals FROM "Token" ORDER BY 1, 2`,
      );
      expect(tokens).toEqual(
        ["1", "2"].flatMap((chainId) => [
          { chainId, address: native, symbol: "ETH", decimals: 18 },
          { chainId, address: "0x00000000000000000000000000000000000000aa", symbol: "UNKNOWN", decimals: 0 },
        ]),
      );
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("backfills FairnessCounter from the bets and results already there when its migration is applied, then keeps it with triggers", async () => {
    const counterMigration = names.findIndex((name) => name.endsWith("_fairness_counters"));
    expect(counterMigration).toBeGreaterThan(0);
    const dir = migrationsDirOf(migrations.slice(0, counterMigration));
    const target = await emptyTarget();
    try {
      await target.migrate({ migrationsDir: dir });
      await target.query(`INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256")
        VALUES (1, 'one', 1, '{}', '00'), (2, 'two', 1, '{}', '00')`);
      // 3 000 bets of 3 games on 2 chains in 3 statuses, a result for every settled one, before the counter exists.
      await target.query(`
        INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                           "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
        SELECT 1 + i % 2, i, 'p', '0x0', i, (ARRAY['coinflip', 'dice', 'wheel'])[1 + i % 5 % 3],
               'c', 's', (ARRAY['PENDING', 'SETTLED', 'REFUNDED'])[1 + i % 3]::"BetStatus", i, 0, 'h', 't', i, i
          FROM generate_series(1, 3000) AS i`);
      await target.query(`
        INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
        SELECT "chainId", "betId", mod("betId" * 72973410673878234712398751239471283746128734612873461287346128734,
               21888242871839275222246405745257275088548364400416034343698204186575808495617), "betId" % 2 = 0, "betId" * 2, '{}', '{}', '', false
          FROM "Bet" WHERE status = 'SETTLED'`);

      expect(await target.migrate()).toEqual({ applied: names.slice(counterMigration), alreadyApplied: names.slice(0, counterMigration) });
      expect(await target.query(FAIRNESS_DRIFT_SQL)).toEqual([]);
      const [totals] = await target.query<{ rows: number; settled: string }>(
        `SELECT count(*)::int AS rows, sum("settledBets")::text AS settled FROM "FairnessCounter"`,
      );
      expect(totals).toEqual({ rows: 2 * 3, settled: "1000" });

      await target.query(`UPDATE "Bet" SET status = 'REFUNDED' WHERE status = 'PENDING' AND "betId" % 5 = 0`);
      await target.query(`DELETE FROM "Bet" WHERE "betId" > 2500`);
      expect(await target.query(FAIRNESS_DRIFT_SQL)).toEqual([]);
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("creates the partial index on (player, chainId) WHERE status = 'PENDING'", async () => {
    const target = await migratedTarget();
    try {
      const [index] = await target.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'Bet_pending_player_chainId_idx'`);
      expect(index?.indexdef).toMatch(/ON public\."Bet" USING btree \(player, "chainId"\) WHERE \(status = 'PENDING'::"BetStatus"\)/);
    } finally {
      await target.close();
    }
  });
});

describe(`database seam (${kind})`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it("gives each caller an isolated, migrated, empty database", async () => {
    const other = await createTestDatabase();
    try {
      expect(db.kind).toBe(kind);
      await db.prisma.network.create({ data: { chainId: 7n, name: "isolated", confirmations: 1, verificationKeyJson: "{}", verificationKeySha256: "00" } });
      expect(await other.prisma.network.count()).toBe(0);
      expect(await db.ping()).toBeGreaterThanOrEqual(0);
    } finally {
      await other.close();
    }
    await expect(other.ping()).rejects.toThrow();
  });

  it("round-trips 2^256-1 exactly through a Decimal(78,0) column", async () => {
    await db.prisma.network.create({ data: { chainId: 1n, name: "decimal", confirmations: 1, verificationKeyJson: "{}", verificationKeySha256: "00" } });
    const max = new Prisma.Decimal(UINT256_MAX);
    await db.prisma.bet.create({
      data: {
        chainId: 1n,
        betId: max,
        player: `0x${"a".repeat(40)}`,
        token: `0x${"0".repeat(40)}`,
        stake: max,
        game: "dice",
        clientSeed: "0x01",
        serverSeedHash: "0x02",
        status: "PENDING",
        placedBlock: 1n,
        placedLogIndex: 0,
        placedBlockHash: "0x03",
        placedTx: "0x04",
        placedAt: 1n,
        lastChangeBlock: 1n,
      },
    });
    const bet = await db.prisma.bet.findUniqueOrThrow({ where: { chainId_betId: { chainId: 1n, betId: max } } });
    expect(bet.betId.toFixed()).toBe(UINT256_MAX);
    expect(bet.stake.toFixed()).toBe(UINT256_MAX);
    const [raw] = await db.prisma.$queryRaw<[{ v: string }]>`SELECT "stake"::text AS v FROM "Bet"`;
    expect(raw.v).toBe(UINT256_MAX);
  });
});

describe.runIf(kind === "postgres")("PostgreSQL only", () => {
  it("serialises concurrent migrators with Prisma's advisory lock: each migration applied once", async () => {
    const target = await emptyTarget();
    try {
      const results = await Promise.all([target.migrate(), target.migrate(), target.migrate(), target.migrate()]);
      expect(results.filter((r) => r.applied.length === names.length)).toHaveLength(1);
      expect(results.filter((r) => r.applied.length === 0)).toHaveLength(3);
      const rows = await target.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations"`);
      expect(rows[0]!.n).toBe(names.length);
    } finally {
      await target.close();
    }
  });

  it("the planner answers the pending count from the partial index", async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (1, 'n', 1, '{}', '00')`,
      );
      // 20 000 bets of 200 players, 2 % pending.
      await client.query(`
        INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                           "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
        SELECT 1, i, '0x' || lpad(to_hex(i % 200), 40, '0'), '0x0', 1, 'dice', 'c', 's',
               (CASE WHEN i % 50 = 0 THEN 'PENDING' ELSE 'SETTLED' END)::"BetStatus",
               i, 0, 'h', 't', i, i
          FROM generate_series(1, 20000) AS i`);
      await client.query(`ANALYZE "Bet"`);
      await client.query(`PREPARE pending_count(text) AS SELECT count(*) FROM "Bet" WHERE player = $1 AND status = 'PENDING'`);
      const { rows } = await client.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) EXECUTE pending_count('0x${"0".repeat(40)}')`);
      const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
      expect(plan).toContain(`"Index Name":"Bet_pending_player_chainId_idx"`);
      const count = await client.query<{ count: string }>(`EXECUTE pending_count('0x${"0".repeat(40)}')`);
      expect(count.rows[0]!.count).toBe("100");
    } finally {
      await client.end();
      await db.close();
    }
  });

  it("honours ?schema= in the URL: migrator, Prisma queries, raw queries and the CLI use that schema", async () => {
    const name = await createEmptyPostgresDatabase();
    const url = `${databaseUrl(name)}?schema=app`;
    const db = await openDatabase({ url, migrate: true });
    const client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
    try {
      await db.prisma.network.create({ data: { chainId: 5n, name: "in-app", confirmations: 1, verificationKeyJson: "{}", verificationKeySha256: "00" } });
      const [viaRaw] = await db.prisma.$queryRaw<[{ n: number }]>`SELECT count(*)::int AS n FROM "Network"`;
      expect(viaRaw.n).toBe(1);
      const { rows } = await client.query<{ app: number; pub: string | null; migrations: string | null }>(
        `SELECT (SELECT count(*)::int FROM app."Network") AS app, to_regclass('public."Network"')::text AS pub,
                to_regclass('app."_prisma_migrations"')::text AS migrations`,
      );
      expect(rows[0]).toEqual({ app: 1, pub: null, migrations: "app._prisma_migrations" });
      const status = await prismaCli(["migrate", "status"], url);
      expect(status.stdout).toContain("Database schema is up to date!");
    } finally {
      await client.end();
      await db.close();
      await dropPostgresDatabase(name);
    }
  });

  it("`prisma migrate status` (offline engine) agrees with a database migrated by prisma/migrate.ts", async () => {
    const db = await createTestDatabase();
    try {
      const status = await prismaCli(["migrate", "status"], db.url!);
      expect(status.stdout).toContain("Database schema is up to date!");
      expect(status.code).toBe(0);
    } finally {
      await db.close();
    }
  });

  it("prisma/migrate.ts agrees with a database migrated by `prisma migrate deploy` (offline engine)", async () => {
    const name = await createEmptyPostgresDatabase();
    const target = await postgresTarget(name, true);
    try {
      const deploy = await prismaCli(["migrate", "deploy"], databaseUrl(name));
      expect(deploy.code).toBe(0);
      expect(deploy.stdout).toContain("All migrations have been successfully applied.");
      expect(await target.migrate()).toEqual({ applied: [], alreadyApplied: names });
    } finally {
      await target.close();
    }
  });
});

async function prismaCli(args: string[], url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnChild({
    args: [prismaCliPath, ...args],
    cwd: repoRoot,
    env: prismaEnv({ ...process.env, DATABASE_URL: url, SHADOW_DATABASE_URL: "" }),
    name: "prisma",
  });
  const { code } = await child.closed;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}
