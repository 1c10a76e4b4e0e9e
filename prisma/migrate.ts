// Runtime migrator: applies prisma/migrations/*/migration.sql in order, on PostgreSQL or PGlite,
// with no Prisma engine involved. It keeps Prisma's own bookkeeping table `_prisma_migrations`
// (same columns, sha256 checksums, one finished row per migration), so `prisma migrate status` /
// `prisma migrate deploy` agree with it and either tool can take over from the other.
//
//   npm run db:migrate                         # bin/migrate.ts: DATABASE_URL, else PGlite in DATA_DIR
//   npm run db:migrate -- --url postgres://…  |  --data-dir ./.data
//
// Differences from `prisma migrate deploy`, on purpose:
// - each migration runs in one transaction together with its `_prisma_migrations` row: a failing
//   migration leaves nothing behind (Prisma would record a failed row that blocks later deploys),
//   so a migration must not contain statements that cannot run in a transaction block
//   (e.g. CREATE INDEX CONCURRENTLY);
// - a migration whose file changed after it was applied is refused (checksum mismatch), instead
//   of being warned about.
// Shared with Prisma: on PostgreSQL the run holds `pg_advisory_lock(72707369)`, the lock the
// Prisma schema engine takes, so concurrent service starts and `prisma migrate deploy` serialise.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite, Transaction as PGliteTransaction } from "@electric-sql/pglite";
import pg from "pg";
import type { Logger } from "../core/logger.ts";
import { quoteIdent } from "../core/sql.ts";

/** The committed migrations directory. */
export const MIGRATIONS_DIR: string = fileURLToPath(new URL("./migrations/", import.meta.url));

/** The advisory lock key the Prisma schema engine takes on PostgreSQL while migrating. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

const MIGRATIONS_TABLE = "_prisma_migrations";

/** Prisma's DDL for its migrations table (PostgreSQL connector), verbatim in meaning. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  /** Directory name, e.g. `20261122074255_init` (also `migration_name` in the table). */
  name: string;
  /** Absolute path of migration.sql. */
  path: string;
  sql: string;
  /** sha256 hex of the file's bytes: what Prisma stores in `checksum`. */
  checksum: string;
}

/** A row of `_prisma_migrations`. */
export interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

export interface MigrateOptions {
  migrationsDir?: string;
  logger?: Logger;
}

export interface MigrateResult {
  /** Migrations applied by this run, in order. */
  applied: string[];
  /** Migrations that were already applied before this run. */
  alreadyApplied: string[];
}

export type MigrationErrorCode = "CHECKSUM_MISMATCH" | "FAILED_MIGRATION" | "APPLY_FAILED" | "MISSING_FILE" | "LOCK_TIMEOUT";

export class MigrationError extends Error {
  override readonly name = "MigrationError";
  readonly code: MigrationErrorCode;
  readonly migration: string | undefined;
  constructor(code: MigrationErrorCode, message: string, migration?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.migration = migration;
  }
}

export function sha256Hex(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}

/** The migrations of `dir`, sorted by directory name (the order Prisma applies them in). */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort();
  return names.map((name) => {
    const path = join(dir, name, "migration.sql");
    if (!existsSync(path)) {
      throw new MigrationError("MISSING_FILE", `Migration directory ${join(dir, name)} has no migration.sql: restore it or delete the directory.`, name);
    }
    const bytes = readFileSync(path);
    return { name, path, sql: bytes.toString("utf8"), checksum: sha256Hex(bytes) };
  });
}

/** Prisma also accepts a checksum taken before git converted line endings. */
function checksumMatches(migration: Migration, stored: string): boolean {
  if (migration.checksum === stored) return true;
  return sha256Hex(migration.sql.replaceAll("\r\n", "\n")) === stored || sha256Hex(migration.sql.replaceAll(/\r?\n/g, "\r\n")) === stored;
}

/** What the migrator needs from a database session. */
interface Session {
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Run a multi-statement script. */
  exec(sql: string): Promise<void>;
}
interface TxSession extends Session {
  transaction<T>(fn: (tx: Session) => Promise<T>): Promise<T>;
}

async function run(session: TxSession, migrations: Migration[], logger: Logger | undefined): Promise<MigrateResult> {
  await session.exec(CREATE_MIGRATIONS_TABLE);
  const rows = await session.query<MigrationRow>(
    `SELECT "id", "checksum", "finished_at", "migration_name", "logs", "rolled_back_at", "started_at", "applied_steps_count"
       FROM "${MIGRATIONS_TABLE}" ORDER BY "started_at" ASC`,
  );

  const failed = rows.filter((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed.length > 0) {
    const first = failed[0]!;
    throw new MigrationError(
      "FAILED_MIGRATION",
      `Migration \`${first.migration_name}\` is recorded as failed in ${MIGRATIONS_TABLE} (started ${first.started_at.toISOString()})` +
        `${first.logs ? `: ${first.logs}` : ""}. Fix the database, then mark it with ` +
        `\`tsx scripts/prisma-cli.ts migrate resolve --rolled-back ${first.migration_name}\` (or --applied) before migrating again.`,
      first.migration_name,
    );
  }

  const applied = new Map<string, MigrationRow>();
  for (const row of rows) if (row.finished_at !== null && row.rolled_back_at === null) applied.set(row.migration_name, row);

  const local = new Map(migrations.map((m) => [m.name, m]));
  for (const [name, row] of applied) {
    const migration = local.get(name);
    if (!migration) {
      logger?.warn({ migration: name }, "migration applied to the database is missing from the migrations directory");
      continue;
    }
    if (!checksumMatches(migration, row.checksum)) {
      throw new MigrationError(
        "CHECKSUM_MISMATCH",
        `Migration \`${name}\` was modified after it was applied: the database recorded checksum ${row.checksum}, ` +
          `${migration.path} now has ${migration.checksum}. Applied migrations must not be edited: restore the file ` +
          `and add a new migration instead.`,
        name,
      );
    }
  }

  const result: MigrateResult = { applied: [], alreadyApplied: migrations.filter((m) => applied.has(m.name)).map((m) => m.name) };
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    const started = performance.now();
    try {
      await session.transaction(async (tx) => {
        const id = randomUUID();
        await tx.query(
          `INSERT INTO "${MIGRATIONS_TABLE}" ("id", "checksum", "migration_name", "started_at", "applied_steps_count")
           VALUES ($1, $2, $3, clock_timestamp(), 0)`,
          [id, migration.checksum, migration.name],
        );
        await tx.exec(migration.sql);
        await tx.query(
          `UPDATE "${MIGRATIONS_TABLE}" SET "finished_at" = clock_timestamp(), "applied_steps_count" = "applied_steps_count" + 1 WHERE "id" = $1`,
          [id],
        );
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new MigrationError(
        "APPLY_FAILED",
        `Migration \`${migration.name}\` failed and was rolled back (nothing of it was applied): ${message}`,
        migration.name,
        { cause: error },
      );
    }
    result.applied.push(migration.name);
    logger?.info({ migration: migration.name, ms: Math.round(performance.now() - started) }, "migration applied");
  }
  return result;
}

/** `?schema=` of a postgres URL (Prisma's convention) and the URL without it. */
export function splitSchemaParam(url: string): { connectionString: string; schema: string | undefined } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  return { connectionString: parsed.toString(), schema };
}

/**
 * Apply pending migrations on PostgreSQL. Holds Prisma's advisory lock for the whole run, on one
 * dedicated connection, so concurrent callers (several services starting at once, or
 * `prisma migrate deploy`) apply each migration once. `?schema=` in the URL is honoured.
 */
export async function migratePostgres(url: string, options: MigrateOptions & { lockTimeoutMs?: number } = {}): Promise<MigrateResult> {
  const migrations = readMigrations(options.migrationsDir);
  const { connectionString, schema } = splitSchemaParam(url);
  const client = new pg.Client({ connectionString, application_name: "bet-api-migrate" });
  await client.connect();
  const session: TxSession = {
    async query<R>(sql: string, params?: unknown[]) {
      return (await client.query(sql, params)).rows as R[];
    },
    async exec(sql: string) {
      await client.query(sql);
    },
    async transaction<T>(fn: (tx: Session) => Promise<T>): Promise<T> {
      await client.query("BEGIN");
      try {
        const value = await fn(session);
        await client.query("COMMIT");
        return value;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    },
  };
  try {
    const lockTimeoutMs = options.lockTimeoutMs ?? 120_000;
    await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    try {
      await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_KEY]);
    } catch (error) {
      if ((error as { code?: string }).code === "55P03") {
        throw new MigrationError(
          "LOCK_TIMEOUT",
          `Timed out after ${lockTimeoutMs} ms waiting for the migration lock (pg_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY})): another migrator is running.`,
          undefined,
          { cause: error },
        );
      }
      throw error;
    }
    await client.query("RESET lock_timeout");
    try {
      if (schema) {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
        await client.query(`SET search_path TO ${quoteIdent(schema)}`);
      }
      return await run(session, migrations, options.logger);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Apply pending migrations on a PGlite instance (one connection: no lock needed). */
export async function migratePglite(db: PGlite, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = readMigrations(options.migrationsDir);
  const wrap = (q: PGlite | PGliteTransaction): Session => ({
    async query<R>(sql: string, params?: unknown[]) {
      return (await q.query<R>(sql, params)).rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  const session: TxSession = {
    ...wrap(db),
    transaction: <T>(fn: (tx: Session) => Promise<T>) => db.transaction((tx) => fn(wrap(tx))),
  };
  return run(session, migrations, options.logger);
}

/** Read `_prisma_migrations` (empty when the table does not exist). */
export async function readMigrationRows(query: <R>(sql: string) => Promise<R[]>): Promise<MigrationRow[]> {
  const [exists] = await query<{ exists: boolean }>(`SELECT to_regclass('"${MIGRATIONS_TABLE}"') IS NOT NULL AS "exists"`);
  if (!exists?.exists) return [];
  return query<MigrationRow>(`SELECT * FROM "${MIGRATIONS_TABLE}" ORDER BY "started_at" ASC`);
}
