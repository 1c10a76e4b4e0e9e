// The database harness of tests and benchmarks: every DB test gets its own isolated, migrated,
// empty database; benchmarks create and drop theirs by name on the server they are given.
//
// TEST_DB=postgres → a fresh PostgreSQL database on TEST_DATABASE_URL's server (default the local
//   one), created with CREATE DATABASE … TEMPLATE from a migrated template database and dropped
//   on close(). The template is named after a hash of the migrations, built once under an
//   advisory lock (concurrent vitest workers wait for the first one), and replaced when the
//   migrations change.
// otherwise → PGlite in memory, started from a dump of a migrated instance (~0.5 s instead of an
//   initdb each time). The dump is cached in node_modules/.cache/bet-api-test/, keyed by the
//   migrations and the PGlite version.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { quoteIdent } from "../core/sql.ts";
import { migratePglite, migratePostgres, readMigrations } from "../prisma/migrate.ts";

export type TestDatabase = Database & { url?: string };

/** Databases this harness creates start with these prefixes (handy to clean up after a crash). */
export const TEST_DATABASE_PREFIX = "bet_api_test_";
export const TEMPLATE_DATABASE_PREFIX = "bet_api_tpl_";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "bet-api-test");
/** Advisory lock serialising template creation across vitest workers (any constant works). */
const TEMPLATE_LOCK_KEY = 0x62657474;

/** The test variables as they are now: benchmarks point the harness at their own server by setting them before a call. */
const currentTestConfig = () => loadConfig(["test"]);

export interface TestDatabaseOptions {
  /** Called with every SQL statement Prisma sends. */
  onQuery?: (sql: string, params: string) => void;
  /** PostgreSQL only: statements running longer are cancelled (core/db.ts). */
  statementTimeoutMs?: number;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  return currentTestConfig().TEST_DB === "postgres" ? createPostgresTestDatabase(options) : createPgliteTestDatabase(options);
}

/** Short hash of the migrations (names + checksums): the template's identity. */
function migrationsHash(): string {
  const text = readMigrations()
    .map((m) => `${m.name}:${m.checksum}`)
    .join("\n");
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// PGlite
// ---------------------------------------------------------------------------------------------

let pgliteTemplate: Promise<Uint8Array> | undefined;

function pgliteVersion(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, "node_modules", "@electric-sql", "pglite", "package.json"), "utf8")) as { version: string };
  return pkg.version;
}

async function buildPgliteTemplate(file: string): Promise<Uint8Array> {
  const db = await PGlite.create();
  try {
    await migratePglite(db);
    const dump = await db.dumpDataDir("none");
    const bytes = new Uint8Array(await dump.arrayBuffer());
    mkdirSync(CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, file); // atomic: concurrent workers never read a half-written dump
    return bytes;
  } finally {
    await db.close();
  }
}

/** The dumped data directory of a migrated PGlite (memoised per module, cached on disk). */
export function migratedPgliteDump(): Promise<Uint8Array> {
  pgliteTemplate ??= (async () => {
    const file = join(CACHE_DIR, `pglite-${pgliteVersion()}-${migrationsHash()}.tar`);
    if (existsSync(file)) return new Uint8Array(readFileSync(file));
    return buildPgliteTemplate(file);
  })();
  return pgliteTemplate;
}

/** A migrated, empty in-memory PGlite instance. */
export async function createTestPglite(): Promise<PGlite> {
  const dump = await migratedPgliteDump();
  try {
    return await PGlite.create({ loadDataDir: new Blob([dump]) });
  } catch (error) {
    // A corrupt cache file: rebuild it once.
    const file = join(CACHE_DIR, `pglite-${pgliteVersion()}-${migrationsHash()}.tar`);
    rmSync(file, { force: true });
    pgliteTemplate = undefined;
    const fresh = await migratedPgliteDump();
    try {
      return await PGlite.create({ loadDataDir: new Blob([fresh]) });
    } catch {
      throw error;
    }
  }
}

async function createPgliteTestDatabase(options: TestDatabaseOptions): Promise<TestDatabase> {
  const pglite = await createTestPglite();
  return openDatabase({ pglite, onQuery: options.onQuery });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL
// ---------------------------------------------------------------------------------------------

/** True when a PostgreSQL server answers at `url` (within ~2 s). */
export async function serverReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, application_name: "bet-api-test-harness" });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function baseUrl(): string {
  return currentTestConfig().TEST_DATABASE_URL;
}

/** `base` pointing at database `name` (other parameters kept). */
export function databaseUrl(name: string, base: string = baseUrl()): string {
  const url = new URL(base);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

/** `fn` with a client of the server of `serverUrl` (default TEST_DATABASE_URL's), closed afterwards. */
export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>, serverUrl: string = baseUrl(), applicationName = "bet-api-test-harness"): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: applicationName, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

let postgresTemplate: Promise<string> | undefined;

/** Name of the migrated template database, creating it when missing (once, across workers). */
export function migratedPostgresTemplate(): Promise<string> {
  postgresTemplate ??= withAdmin(async (admin) => {
    const name = `${TEMPLATE_DATABASE_PREFIX}${migrationsHash()}`;
    await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    try {
      const existing = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (existing.rowCount === 0) {
        // Build under a temporary name and rename at the end: a crash never leaves a half-migrated
        // database under the template's name.
        const building = `${name}_build`;
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(building)} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${quoteIdent(building)}`);
        await migratePostgres(databaseUrl(building));
        await admin.query(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(name)}`);
        // No connections: nothing can block CREATE DATABASE … TEMPLATE.
        await admin.query(`ALTER DATABASE ${quoteIdent(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
        // Templates of older migration sets are dead weight.
        const stale = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2", [
          `${TEMPLATE_DATABASE_PREFIX}%`,
          name,
        ]);
        for (const { datname } of stale.rows) {
          await admin.query(`ALTER DATABASE ${quoteIdent(datname)} WITH IS_TEMPLATE false`).catch(() => undefined);
          await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)}`).catch(() => undefined);
        }
      }
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]).catch(() => undefined);
    }
  });
  postgresTemplate.catch(() => {
    postgresTemplate = undefined;
  });
  return postgresTemplate;
}

/** Create an empty, migrated database from the template; returns its name. */
export async function createPostgresDatabaseFromTemplate(): Promise<string> {
  const name = `${TEST_DATABASE_PREFIX}${process.pid}_${randomBytes(5).toString("hex")}`;
  await withAdmin(async (admin) => {
    for (let attempt = 1; ; attempt++) {
      const template = await migratedPostgresTemplate();
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
        return;
      } catch (error) {
        const code = (error as { code?: string }).code;
        // 55006: "source database is being accessed by other users" — transient. 3D000: the
        // template is gone, dropped as stale by a checkout with other migrations on the same
        // server — build ours again.
        if ((code !== "55006" && code !== "3D000") || attempt >= 40) throw error;
        if (code === "3D000") postgresTemplate = undefined;
        await new Promise((r) => setTimeout(r, 25 * attempt));
      }
    }
  });
  return name;
}

/** Create an empty (unmigrated) database; returns its name. Drop it with dropPostgresDatabase. */
export async function createEmptyPostgresDatabase(): Promise<string> {
  const name = `${TEST_DATABASE_PREFIX}${process.pid}_${randomBytes(5).toString("hex")}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)}`));
  return name;
}

/** Drops database `name` if it exists (ending its connections). */
export async function dropPostgresDatabase(name: string, serverUrl: string = baseUrl()): Promise<void> {
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`), serverUrl);
}

/** Database `name` on the server of `serverUrl`, empty: dropped first if it exists (benchmarks). */
export async function recreatePostgresDatabase(name: string, serverUrl: string = baseUrl()): Promise<void> {
  await withAdmin(async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  }, serverUrl);
}

async function createPostgresTestDatabase(options: TestDatabaseOptions): Promise<TestDatabase> {
  const name = await createPostgresDatabaseFromTemplate();
  const url = databaseUrl(name);
  let db: Database;
  try {
    db = await openDatabase({ url, poolSize: 5, onQuery: options.onQuery, statementTimeoutMs: options.statementTimeoutMs });
  } catch (error) {
    await dropPostgresDatabase(name);
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    ...db,
    url,
    close() {
      closed ??= (async () => {
        try {
          await db.close();
        } finally {
          await dropPostgresDatabase(name);
        }
      })();
      return closed;
    },
  };
}
