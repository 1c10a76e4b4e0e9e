import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { migratePglite, migratePostgres, type MigrateOptions, type MigrateResult, type Migration } from "../prisma/migrate.ts";
import { testConfig } from "./config.ts";
import { createEmptyPostgresDatabase, createTestDatabase, createTestPglite, databaseUrl, dropPostgresDatabase } from "./db.ts";

// Databases of the test run's kind (TEST_DB) for tests of the migrations themselves: an empty one
// to migrate step by step, or one the harness migrated, each with the migrator and a raw query.

const kind = testConfig.TEST_DB;

/** A database the migrator can run on, with a raw query function. */
export interface Target {
  migrate(options?: MigrateOptions): Promise<MigrateResult>;
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export async function postgresTarget(name: string, drop: boolean): Promise<Target> {
  const url = databaseUrl(name);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    migrate: (options) => migratePostgres(url, options),
    query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
    async close() {
      await client.end();
      if (drop) await dropPostgresDatabase(name);
    },
  };
}

function pgliteTarget(db: PGlite): Target {
  return {
    migrate: (options) => migratePglite(db, options),
    query: async <R>(sql: string, params?: unknown[]) => (await db.query<R>(sql, params)).rows,
    close: () => db.close(),
  };
}

/** An empty database (no migrations applied). */
export async function emptyTarget(): Promise<Target> {
  if (kind === "postgres") return postgresTarget(await createEmptyPostgresDatabase(), true);
  return pgliteTarget(await PGlite.create());
}

/** A database migrated by the harness (template / dumped data dir). */
export async function migratedTarget(): Promise<Target> {
  if (kind === "postgres") {
    const db = await createTestDatabase();
    const name = new URL(db.url!).pathname.slice(1);
    const target = await postgresTarget(name, false);
    return {
      ...target,
      close: async () => {
        await target.close();
        await db.close();
      },
    };
  }
  return pgliteTarget(await createTestPglite());
}

/** A new directory holding copies of `migrations` (e.g. those before the one under test), for `migrate({ migrationsDir })`. */
export function migrationsDirOf(migrations: readonly Migration[]): string {
  const dir = mkdtempSync(join(tmpdir(), "migrations-"));
  for (const m of migrations) {
    mkdirSync(join(dir, m.name));
    copyFileSync(m.path, join(dir, m.name, "migration.sql"));
  }
  return dir;
}
