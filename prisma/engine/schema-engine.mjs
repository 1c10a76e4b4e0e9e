#!/usr/bin/env node
// Offline stand-in for Prisma's native `schema-engine` binary (PostgreSQL only).
//
// The Prisma CLI (7.x) spawns `schema-engine` with
//   --datamodels <file> [--datamodels <file> ...] --datasource '{"url":…,"shadowDatabaseUrl":…}'
// and then talks JSON-RPC 2.0 over stdio (one JSON object per line; responses on stdout, logs as
// JSON lines on stderr; the engine sends `print` requests back to the CLI for `migrate diff`).
// It also runs `schema-engine --datasource '{"url":…}' cli can-connect-to-database|create-database`
// (to create a missing database) and `schema-engine --version`.
//
// This program implements that protocol and delegates every RPC to `@prisma/schema-engine-wasm`
// (the same Rust engine compiled to WebAssembly, version-matched to the CLI), which reaches the
// database through a JS driver adapter (`@prisma/adapter-pg`). Point PRISMA_SCHEMA_ENGINE_BINARY
// at this file (scripts/prisma-cli.ts does so when the variable is unset).
//
// Shadow database: `shadowDatabaseUrl` when configured (its schema is emptied first); otherwise a
// temporary `prisma_migrate_shadow_db_<uuid>` database on the main server, dropped afterwards;
// with no datasource URL at all, or shadowDatabaseUrl = "pglite:memory", an in-memory PGlite.
//
// Work-arounds for the WASM engine / adapters as of 7.10 (each explained where it is done):
// - adapter-pg cannot read the `"char"` type the engine's describer selects → reported as text;
// - adapter-pg's executeScript splits scripts on every `;` → scripts are sent whole;
// - evaluateDataLoss/createMigration have no shadow-database factory → cache primed, retried;
// - the shadow database is described without the schema's preview features, which breaks
//   `partialIndexes` → migrations are replayed and diffed through a second engine instance.
//
// Debug: SCHEMA_ENGINE_SHIM_DEBUG=1 logs every request/response to stderr (the CLI shows the
// engine's stderr with DEBUG="prisma:schemaEngine*"); SCHEMA_ENGINE_SHIM_LOG=<file> appends
// them to a file.

import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const DEBUG = process.env.SCHEMA_ENGINE_SHIM_DEBUG === "1";
const LOG_FILE = process.env.SCHEMA_ENGINE_SHIM_LOG;

function trace(message) {
  if (LOG_FILE) appendFileSync(LOG_FILE, `${new Date().toISOString()} [${process.pid}] ${message}\n`);
  if (DEBUG) writeLog("DEBUG", message);
}

/** One log line in the native engine's format (tracing-subscriber JSON). */
function writeLog(level, message, extraFields = {}, target = "schema_engine_shim") {
  process.stderr.write(
    `${JSON.stringify({ timestamp: new Date().toISOString(), level, fields: { message, ...extraFields }, target })}\n`,
  );
}

// ---------------------------------------------------------------------------------------------
// WASM engine loading (Node 20 cannot `import` .wasm files without a flag, so instantiate by hand)
// ---------------------------------------------------------------------------------------------

let wasmModule;
async function loadWasm() {
  if (wasmModule) return wasmModule;
  const bgUrl = import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const bg = await import(bgUrl);
  const wasmPath = join(dirname(fileURLToPath(bgUrl)), "schema_engine_bg.wasm");
  const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { "./schema_engine_bg.js": bg });
  bg.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  wasmModule = bg;
  return bg;
}

// The Rust panic hook reports the panic message here before the WASM traps with `unreachable`.
let lastPanicMessage;
globalThis.PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message) {
    lastPanicMessage = `RuntimeError: ${message}`;
  },
};

// ---------------------------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------------------------

const datamodelPaths = [];
let datasource = {};
let cliCommand;
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "--datamodels" || arg === "-d") datamodelPaths.push(args[++i]);
  else if (arg === "--datasource") datasource = JSON.parse(args[++i] ?? "{}");
  else if (arg === "--enabled-preview-features" || arg === "--extension-types") i++;
  else if (arg === "cli") cliCommand = args[++i];
  else if (arg === "--version" || arg === "-V" || arg === "version") {
    const wasm = await loadWasm();
    process.stdout.write(`schema-engine-cli ${wasm.version()}\n`);
    process.exit(0);
  } else if (arg === "--help" || arg === "-h") {
    process.stdout.write("schema-engine (offline shim over @prisma/schema-engine-wasm)\n");
    process.exit(0);
  }
}
trace(`argv: ${JSON.stringify(args.map((a) => a.replace(/\/\/[^@/]*@/g, "//***@")))}`);

// ---------------------------------------------------------------------------------------------
// PostgreSQL driver adapter factory
// ---------------------------------------------------------------------------------------------

const { default: pg } = await import("pg");

/**
 * pg config object from a postgres:// URL. Individual fields (not `connectionString`) so that the
 * database can be replaced (pg lets `connectionString` win over `database`). `?schema=` is returned
 * separately: the adapter ignores it in the URL and takes it as an option.
 */
function pgConfigFromUrl(url) {
  const u = new URL(url);
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw userError("P1013", `The provided database string is invalid. This offline schema engine only supports postgres:// URLs (got ${u.protocol}).`);
  }
  const schema = u.searchParams.get("schema") ?? undefined;
  u.searchParams.delete("schema");
  // Keep every other parameter (sslmode, options, …) by letting pg parse the URL, then pin fields.
  const config = { connectionString: u.toString() };
  const database = decodeURIComponent(u.pathname.replace(/^\//, "")) || u.username || "postgres";
  return { config, schema, database, host: u.hostname, port: u.port || "5432" };
}

function withDatabase(config, database) {
  const u = new URL(config.connectionString);
  u.pathname = `/${encodeURIComponent(database)}`;
  return { connectionString: u.toString() };
}

let PrismaPg;
async function adapterPg() {
  if (!PrismaPg) ({ PrismaPg } = await import("@prisma/adapter-pg"));
  return PrismaPg;
}

/**
 * Postgres' `"char"` type (OID 18, e.g. pg_constraint.contype) is not readable by adapter-pg 7.10;
 * the engine's describer selects such columns. Report them as text (their value is a 1-char string).
 */
class CharAsTextClient extends pg.Client {
  query(...queryArgs) {
    const last = queryArgs[queryArgs.length - 1];
    if (typeof last === "function") {
      queryArgs[queryArgs.length - 1] = (err, res) => last(err, err ? res : fixCharFields(res));
      return super.query(...queryArgs);
    }
    if (queryArgs[0] && typeof queryArgs[0] === "object" && typeof queryArgs[0].callback === "function") {
      const cb = queryArgs[0].callback;
      queryArgs[0].callback = (err, res) => cb(err, err ? res : fixCharFields(res));
      return super.query(...queryArgs);
    }
    const result = super.query(...queryArgs);
    return result && typeof result.then === "function" ? result.then(fixCharFields) : result;
  }
}
function fixCharFields(res) {
  for (const r of Array.isArray(res) ? res : [res]) {
    for (const field of r?.fields ?? []) if (field.dataTypeID === 18) field.dataTypeID = 25;
  }
  return res;
}

/**
 * Wrap a PrismaPg adapter:
 * - `executeScript` sends the whole script as one simple-protocol query (adapter-pg splits on every
 *   `;`, which breaks literals and function bodies; the native engine sends the script as is);
 * - `dispose` also runs `onDispose`.
 */
function patchAdapter(adapter, onDispose) {
  const pool = adapter.underlyingDriver();
  adapter.executeScript = async (script) => {
    try {
      await pool.query(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  if (onDispose) {
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      try {
        await dispose();
      } finally {
        await onDispose();
      }
    };
  }
  return adapter;
}

const openPools = new Set();
function newPool(config) {
  // One connection, like the native engine: session state (advisory locks, search_path) holds.
  const pool = new pg.Pool({ ...config, max: 1, Client: CharAsTextClient });
  pool.on("error", (error) => trace(`pool error: ${error.message}`));
  openPools.add(pool);
  return pool;
}
async function endPool(pool) {
  if (!openPools.delete(pool)) return;
  await pool.end().catch(() => {});
}

async function connectAdapter(url, onDispose) {
  const Factory = await adapterPg();
  const { config, schema } = pgConfigFromUrl(url);
  // With `?schema=`: unqualified names in migration scripts must land in that schema too.
  const pool = newPool(schema ? { ...config, options: `-c search_path=${quoteIdent(schema)}` } : config);
  if (schema && schema !== "public") {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`).catch((error) => trace(`create schema: ${error.message}`));
  }
  const factory = new Factory(pool, schema ? { schema } : undefined);
  const adapter = await factory.connect();
  return patchAdapter(adapter, async () => {
    await endPool(pool);
    if (onDispose) await onDispose();
  });
}

/** The SqlMigrationAwareDriverAdapterFactory handed to the WASM engine. */
function makeAdapterFactory({ url, shadowDatabaseUrl }) {
  return {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    async connect() {
      if (!url) return missingUrlAdapter();
      return connectAdapter(url);
    },
    async connectToShadowDb() {
      if (shadowDatabaseUrl && shadowDatabaseUrl !== "pglite:memory") {
        if (url && sameDatabase(url, shadowDatabaseUrl)) {
          throw userError("P3005", "The shadow database you configured appears to be the same as the main database. Please specify another shadow database.");
        }
        // Like the native engine with an external shadow database: start from an empty schema.
        const { config, schema } = pgConfigFromUrl(shadowDatabaseUrl);
        const client = new pg.Client(config);
        await client.connect();
        try {
          const s = quoteIdent(schema ?? "public");
          await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE; CREATE SCHEMA ${s};`);
        } finally {
          await client.end();
        }
        return connectAdapter(shadowDatabaseUrl);
      }
      if (!url || shadowDatabaseUrl === "pglite:memory") {
        // No server configured: an in-memory PGlite is a perfectly good empty shadow database.
        return pgliteShadowAdapter();
      }
      // Temporary shadow database on the main server, dropped on dispose.
      const { config, schema } = pgConfigFromUrl(url);
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      const admin = new pg.Client(config);
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
      } finally {
        await admin.end();
      }
      const shadowUrl = new URL(withDatabase(config, name).connectionString);
      if (schema) shadowUrl.searchParams.set("schema", schema);
      return connectAdapter(shadowUrl.toString(), async () => {
        const dropper = new pg.Client(config);
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
      });
    },
  };
}

/**
 * Without a datasource URL the engine can still diff schema files (and migrations, with a PGlite
 * shadow database). Its constructor probes the database once (schema exists? server version?):
 * answer that probe with a PostgreSQL 15 stand-in; anything else fails with a clear error.
 */
function missingUrlAdapter() {
  const fail = async (query) => {
    trace(`query without url: ${JSON.stringify(query)}`);
    throw userError("P1012", "The datasource `url` is not set: set DATABASE_URL (see prisma.config.ts).");
  };
  return {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    async queryRaw(query) {
      if (/^SELECT EXISTS\(SELECT 1 FROM pg_namespace WHERE nspname = \$1\), version\(\)/.test(query.sql)) {
        return {
          columnNames: ["exists", "version", "numeric_version"],
          columnTypes: [5, 7, 0], // Boolean, Text, Int32 (ColumnTypeEnum)
          rows: [[true, "PostgreSQL 15.0 (no database: offline schema engine shim)", 150000]],
        };
      }
      return fail(query);
    },
    executeRaw: fail,
    executeScript: fail,
    startTransaction: fail,
    getConnectionInfo: () => ({ schemaName: "public", supportsRelationJoins: true }),
    dispose: async () => {},
  };
}

/** In-memory PGlite (PostgreSQL 17 in WASM) as a throw-away shadow database. */
async function pgliteShadowAdapter() {
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("pglite-prisma-adapter"),
  ]);
  const db = await PGlite.create();
  const adapter = await new PrismaPGlite(db).connect();
  // pglite-prisma-adapter 0.7.2 does not await `exec` in executeScript: errors would be lost.
  adapter.executeScript = async (script) => {
    try {
      await db.exec(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  adapter.dispose = async () => {
    await db.close();
  };
  return adapter;
}

function sameDatabase(a, b) {
  const x = pgConfigFromUrl(a);
  const y = pgConfigFromUrl(b);
  return x.host === y.host && x.port === y.port && x.database === y.database && (x.schema ?? "public") === (y.schema ?? "public");
}

function quoteIdent(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

class UserFacingError extends Error {
  constructor(code, message, meta) {
    super(message);
    this.code = code;
    this.meta = meta ?? {};
  }
}
function userError(code, message, meta) {
  return new UserFacingError(code, message, meta);
}

/** pg error → Prisma user-facing error for connection problems (as the native engine reports). */
function connectionError(error, url) {
  const { database, host, port } = pgConfigFromUrl(url);
  const at = `${host}:${port}`;
  if (error?.code === "3D000") {
    return userError("P1003", `Database \`${database}\` does not exist on the database server at \`${at}\`.`, { database_name: database, database_host: host, database_port: Number(port) });
  }
  if (error?.code === "28P01" || error?.code === "28000") {
    return userError("P1000", `Authentication failed against database server at \`${host}\`, the provided database credentials are not valid.`, { database_host: host });
  }
  if (error?.code === "ECONNREFUSED" || error?.code === "ENOTFOUND" || error?.code === "ETIMEDOUT" || error?.code === "EHOSTUNREACH") {
    return userError("P1001", `Can't reach database server at \`${at}\`\n\nPlease make sure your database server is running at \`${at}\`.`, { database_host: host, database_port: Number(port) });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Any thrown value → the `data` of a JSON-RPC error, as the native engine renders CoreError. */
function toUserFacing(error, errorRegistry) {
  if (error instanceof UserFacingError) {
    return { is_panic: false, message: error.message, meta: error.meta, error_code: error.code };
  }
  if (error instanceof WebAssembly.RuntimeError || (error?.name === "RuntimeError" && lastPanicMessage)) {
    const message = lastPanicMessage ?? String(error?.message ?? error);
    return { is_panic: true, message, backtrace: error?.stack ?? null };
  }
  // Errors thrown by JS adapter code are parked in the registry; the engine only sees their id.
  const id = /(?:GenericJs|External error)[^0-9]*(\d+)/.exec(String(error?.message ?? ""))?.[1];
  if (id !== undefined && errorRegistry) {
    const original = errorRegistry.consumeError(Number(id))?.error;
    if (original) return toUserFacing(original, undefined);
  }
  if (error && typeof error === "object" && typeof error.code === "string" && /^P\d{4}$/.test(error.code)) {
    return { is_panic: false, message: String(error.message ?? ""), meta: error.meta ?? {}, error_code: error.code };
  }
  if (error?.name === "DriverAdapterError" && error.cause) {
    const cause = error.cause;
    return { is_panic: false, message: cause.originalMessage ?? cause.message ?? cause.kind ?? String(error.message), backtrace: null };
  }
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  return { is_panic: false, message, backtrace: null };
}

// ---------------------------------------------------------------------------------------------
// `cli` sub-commands (run by the CLI before migrate commands to create a missing database)
// ---------------------------------------------------------------------------------------------

async function runCliCommand(command) {
  const url = datasource.url;
  // The CLI drops the first stderr line before parsing the rest as JSON log lines.
  writeLog("INFO", `Starting schema engine CLI (offline WASM shim): ${command}`, {}, "schema_engine_cli");
  try {
    if (!url) throw userError("P1012", "The datasource `url` is not set: set DATABASE_URL (see prisma.config.ts).");
    const { config, database } = pgConfigFromUrl(url);
    if (command === "can-connect-to-database") {
      const client = new pg.Client(config);
      try {
        await client.connect();
        await client.query("SELECT 1");
      } catch (error) {
        throw connectionError(error, url);
      } finally {
        await client.end().catch(() => {});
      }
      writeLog("INFO", "Connection successful", {}, "schema_engine_cli");
    } else if (command === "create-database") {
      await createDatabase(config, database, url);
      writeLog("INFO", `Database '${database}' was successfully created.`, {}, "schema_engine_cli");
    } else if (command === "drop-database") {
      const admin = new pg.Client(withDatabase(config, "postgres"));
      await admin.connect().catch((error) => {
        throw connectionError(error, url);
      });
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)}`);
      } finally {
        await admin.end();
      }
      writeLog("INFO", `The database was successfully dropped.`, {}, "schema_engine_cli");
    } else {
      throw new Error(`Unsupported schema engine CLI command: ${command}`);
    }
    return 0;
  } catch (error) {
    const data = toUserFacing(error);
    const fields = { message: data.message, is_panic: data.is_panic };
    if (data.error_code) fields.error_code = data.error_code;
    process.stderr.write(
      `${JSON.stringify({ timestamp: new Date().toISOString(), level: "ERROR", fields, target: "schema_engine::logger" })}`,
    );
    return 1;
  }
}

async function createDatabase(config, database, url) {
  const admin = new pg.Client(withDatabase(config, "postgres"));
  await admin.connect().catch((error) => {
    throw connectionError(error, url);
  });
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(database)}`);
  } catch (error) {
    if (error?.code === "42P04") {
      throw userError("P1009", `Database \`${database}\` already exists on the database server at \`${pgConfigFromUrl(url).host}:${pgConfigFromUrl(url).port}\``, { database_name: database });
    }
    throw error;
  } finally {
    await admin.end();
  }
}

if (cliCommand !== undefined) {
  const code = await runCliCommand(cliCommand);
  await Promise.all([...openPools].map(endPool));
  process.exit(code);
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC server
// ---------------------------------------------------------------------------------------------

const datamodels = datamodelPaths.length > 0 ? datamodelPaths.map((p) => [p, readFileSync(p, "utf8")]) : undefined;

function onEngineLog(line) {
  // The WASM engine hands over tracing events as JSON strings; keep the native format.
  try {
    const event = typeof line === "string" ? JSON.parse(line) : line;
    process.stderr.write(`${JSON.stringify(event)}\n`);
  } catch {
    writeLog("INFO", String(line));
  }
}

let bindFactory;
async function newEngine(factory, initialDatamodels) {
  const wasm = await loadWasm();
  if (!bindFactory) ({ bindMigrationAwareSqlAdapterFactory: bindFactory } = await import("@prisma/driver-adapter-utils"));
  const bound = bindFactory(factory);
  try {
    const engine = await wasm.SchemaEngine.new({ datamodels: initialDatamodels }, onEngineLog, bound);
    return { engine, bound };
  } catch (error) {
    throw resolveRegistryError(error, bound.errorRegistry);
  }
}

let enginePromise;
let boundFactory;
async function getEngine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      try {
        const { engine, bound } = await newEngine(makeAdapterFactory(datasource), datamodels);
        boundFactory = bound;
        return engine;
      } catch (error) {
        throw datasource.url ? rethrowConnection(error, datasource.url) : error;
      }
    })();
  }
  return enginePromise;
}

/** Replace an "External error id#N" coming out of the engine by the JS error the adapter threw. */
function resolveRegistryError(error, registry) {
  const id = /(?:GenericJs|External error)[^0-9]*(\d+)/.exec(String(error?.message ?? ""))?.[1];
  if (id === undefined || !registry) return error;
  return registry.consumeError(Number(id))?.error ?? error;
}

// ---------------------------------------------------------------------------------------------
// Preview features vs. the shadow database (WASM engine 7.10 limitation, worked around here)
// ---------------------------------------------------------------------------------------------
//
// The WASM engine describes the shadow database (migrations replayed) without the schema's preview
// features, so with `partialIndexes` it reads a partial index as a plain index. Every comparison
// "migrations → schema" then sees a change (`CREATE INDEX … WHERE …` again): `migrate dev` would
// create a bogus migration each time and `migrate diff --from-migrations --to-schema` would never
// be empty. The native engine does not have this problem.
//
// Work-around, used only when the schema enables `partialIndexes`: replay the migrations into a
// shadow database ourselves, open a second WASM engine whose *main* database is that shadow
// database, and diff it as a `schemaDatasource` target — that path does apply the schema's preview
// features. Set SCHEMA_ENGINE_SHIM_NO_PREVIEW_FIX=1 to disable it.

const PREVIEW_FIX = process.env.SCHEMA_ENGINE_SHIM_NO_PREVIEW_FIX !== "1";

function needsPreviewFix(files) {
  return PREVIEW_FIX && Array.isArray(files) && files.some((f) => /previewFeatures\s*=\s*\[[^\]]*"partialIndexes"/.test(f.content));
}

/** Run `fn(engine)` on an engine whose main database is a fresh shadow database with all migrations. */
async function withMigratedShadow(migrationsList, fn) {
  const factory = makeAdapterFactory(datasource);
  const shadow = await factory.connectToShadowDb();
  try {
    if (migrationsList.shadowDbInitScript?.trim()) await shadow.executeScript(migrationsList.shadowDbInitScript);
    for (const dir of migrationsList.migrationDirectories) {
      const content = dir.migrationFile.content;
      if (content.tag !== "ok") {
        throw userError("P3015", `Could not find the migration file at ${join(migrationsList.baseDir, dir.path, dir.migrationFile.path)}. Please delete the directory or restore the migration file.`, { migration_file_path: join(migrationsList.baseDir, dir.path) });
      }
      try {
        await shadow.executeScript(content.value);
      } catch (error) {
        const inner = error?.cause?.originalMessage ?? error?.cause?.message ?? error?.message ?? String(error);
        throw userError("P3006", `Migration \`${dir.path}\` failed to apply cleanly to the shadow database. \nError:\n${inner}`, { migration_name: dir.path, inner_error: inner });
      }
    }
    const shadowFactory = {
      provider: "postgres",
      adapterName: "@prisma/adapter-pg",
      connect: async () => shadow,
      connectToShadowDb: () => factory.connectToShadowDb(),
    };
    const { engine, bound } = await newEngine(shadowFactory, undefined);
    try {
      return await fn(engine);
    } catch (error) {
      throw resolveRegistryError(error, bound.errorRegistry);
    } finally {
      engine.free();
    }
  } finally {
    await shadow.dispose();
  }
}

/** diff(migrations → files) with preview features applied on both sides. */
function diffMigrationsToSchema(migrationsList, files, { script, exitCode, filters }) {
  const shadowTarget = { tag: "schemaDatasource", files, configDir: process.cwd() };
  return withMigratedShadow(migrationsList, (e) =>
    e.diff({ from: shadowTarget, to: { tag: "schemaDatamodel", files }, script, exitCode, filters }),
  );
}

/**
 * WASM 7.10: `evaluateDataLoss` and `createMigration` get no shadow-database factory; they only work
 * when the engine's migration-schema cache already holds the migrations (filled by devDiagnostic /
 * diagnoseMigrationHistory, emptied when applyMigrations applied something). On that error, fill
 * the cache with a devDiagnostic over the same migrations and retry once.
 */
async function withShadowCache(engine, params, call) {
  try {
    return await call();
  } catch (error) {
    if (!/shadow DB must be provided through an external factory/i.test(String(error?.message ?? error))) throw error;
    trace("migration schema cache miss: priming it with devDiagnostic");
    await engine.devDiagnostic({ migrationsList: params.migrationsList, filters: params.filters });
    return call();
  }
}

function utcTimestamp() {
  return new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

/** The leading comment block with data-loss warnings that createMigration puts before the SQL. */
function warningsHeader(script) {
  const m = /^\/\*[\s\S]*?\*\/\n*/.exec(script ?? "");
  return m ? m[0] : "";
}

function rethrowConnection(error, url) {
  const id = /(?:GenericJs|External error)[^0-9]*(\d+)/.exec(String(error?.message ?? ""))?.[1];
  const original = id !== undefined ? boundFactory?.errorRegistry.consumeError(Number(id))?.error : undefined;
  const candidate = original ?? error;
  const cause = candidate?.cause;
  if (cause && typeof cause === "object" && cause.kind === "DatabaseDoesNotExist") return connectionError({ code: "3D000" }, url);
  if (cause && typeof cause === "object" && cause.kind === "DatabaseNotReachable") return connectionError({ code: "ECONNREFUSED" }, url);
  if (cause && typeof cause === "object" && cause.kind === "AuthenticationFailed") return connectionError({ code: "28P01" }, url);
  if (candidate?.code && typeof candidate.code === "string" && !/^P\d{4}$/.test(candidate.code)) return connectionError(candidate, url);
  return candidate;
}

/** Methods of the native engine's RPC API and their WASM counterpart. */
const methods = {
  applyMigrations: (e, p) => e.applyMigrations(p),
  createMigration: async (e, p) => {
    if (!needsPreviewFix(p.schema?.files)) return withShadowCache(e, p, () => e.createMigration(p));
    let original;
    try {
      original = await withShadowCache(e, p, () => e.createMigration(p));
    } catch (error) {
      trace(`engine createMigration failed, using the corrected diff: ${error?.message ?? error}`);
    }
    const diff = await diffMigrationsToSchema(p.migrationsList, p.schema.files, { script: true, exitCode: true, filters: p.filters });
    const generatedMigrationName = original?.generatedMigrationName ?? `${utcTimestamp()}_${p.migrationName}`;
    const base = { connectorType: "postgresql", generatedMigrationName, extension: original?.extension ?? "sql" };
    if (diff.exitCode === 0) {
      return { ...base, migrationScript: p.draft ? "-- This is an empty migration." : null };
    }
    return { ...base, migrationScript: warningsHeader(original?.migrationScript) + (diff.stdout ?? "") };
  },
  dbExecute: async (e, p) => {
    // Native: `datasourceType` may point anywhere; the WASM engine runs on its own connection.
    if (p?.datasourceType?.tag === "url" && p.datasourceType.url !== datasource.url) {
      const adapter = await connectAdapter(p.datasourceType.url);
      try {
        await adapter.executeScript(p.script);
      } finally {
        await adapter.dispose();
      }
      return {};
    }
    await e.dbExecute(p);
    return {};
  },
  debugPanic: (e) => e.debugPanic(),
  devDiagnostic: (e, p) => e.devDiagnostic(p),
  diagnoseMigrationHistory: (e, p) => e.diagnoseMigrationHistory(p),
  diff: async (e, p, ctx) => {
    let result;
    const schemaSide = (t) => (t?.tag === "schemaDatamodel" ? t.files : undefined);
    if (p.from?.tag === "migrations" && needsPreviewFix(schemaSide(p.to))) {
      const shadowTarget = { tag: "schemaDatasource", files: p.to.files, configDir: process.cwd() };
      result = await withMigratedShadow(p.from, (e2) => e2.diff({ ...p, from: shadowTarget }));
    } else if (p.to?.tag === "migrations" && needsPreviewFix(schemaSide(p.from))) {
      const shadowTarget = { tag: "schemaDatasource", files: p.from.files, configDir: process.cwd() };
      result = await withMigratedShadow(p.to, (e2) => e2.diff({ ...p, to: shadowTarget }));
    } else {
      result = await e.diff(p);
    }
    // The native engine prints the diff through the `print` callback and returns stdout: null.
    if (result.stdout) {
      await ctx.print(result.stdout.endsWith("\n") ? result.stdout : `${result.stdout}\n`);
    }
    return { exitCode: result.exitCode, stdout: null };
  },
  ensureConnectionValidity: async (e, p) => {
    await e.ensureConnectionValidity(p);
    return {};
  },
  evaluateDataLoss: async (e, p) => {
    const result = await withShadowCache(e, p, () => e.evaluateDataLoss(p));
    if (result.migrationSteps === 0 || !needsPreviewFix(p.schema?.files)) return result;
    const diff = await diffMigrationsToSchema(p.migrationsList, p.schema.files, { script: false, exitCode: true, filters: p.filters });
    return diff.exitCode === 0 ? { migrationSteps: 0, unexecutableSteps: [], warnings: [] } : result;
  },
  getDatabaseVersion: (e, p) => e.version(p ?? undefined),
  introspect: (e, p) => e.introspect(p),
  introspectSql: (e, p) => e.introspectSql(p),
  markMigrationApplied: async (e, p) => {
    await e.markMigrationApplied(p);
    return {};
  },
  markMigrationRolledBack: async (e, p) => {
    await e.markMigrationRolledBack(p);
    return {};
  },
  reset: async (e, p) => {
    await e.reset(p ?? { filter: { externalTables: [], externalEnums: [] } });
    return null;
  },
  schemaPush: (e, p) => e.schemaPush(p),
};

/** Methods that do not need the WASM engine (or a database connection through it). */
const standaloneMethods = {
  async createDatabase(p) {
    const url = p?.datasource?.tag === "ConnectionString" ? p.datasource.url : datasource.url;
    if (!url) throw userError("P1012", "The datasource `url` is not set: set DATABASE_URL (see prisma.config.ts).");
    const { config, database } = pgConfigFromUrl(url);
    await createDatabase(config, database, url);
    return { databaseName: database };
  },
};

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

// Requests the shim sends to the CLI (only `print`), awaiting the CLI's response.
let nextOutgoingId = 1_000_000;
const outgoing = new Map();
const ctx = {
  print(content) {
    const id = nextOutgoingId++;
    return new Promise((resolve) => {
      outgoing.set(id, resolve);
      send({ jsonrpc: "2.0", id, method: "print", params: { content } });
    });
  },
};

// The WASM engine holds `&mut self`: run one request at a time, in arrival order.
let queue = Promise.resolve();
const pending = new Set();

async function handle(request) {
  const { id, method, params } = request;
  trace(`-> ${method} ${JSON.stringify(params ?? null).slice(0, 2000)}`);
  try {
    let result;
    if (standaloneMethods[method]) {
      result = await standaloneMethods[method](params);
    } else if (methods[method]) {
      const engine = await getEngine();
      result = await methods[method](engine, params, ctx);
    } else {
      send({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } });
      return;
    }
    trace(`<- ${method} ${JSON.stringify(result ?? null).slice(0, 2000)}`);
    send({ jsonrpc: "2.0", id, result: result ?? null });
  } catch (error) {
    const data = toUserFacing(rethrowIfConnection(error), boundFactory?.errorRegistry);
    trace(`<- ${method} ERROR ${JSON.stringify(data)}`);
    if (data.is_panic) writeLog("ERROR", data.message, {}, "schema_engine::logger");
    send({ jsonrpc: "2.0", id, error: { code: 4466, message: "An error happened. Check the data field for details.", data } });
  }
}

function rethrowIfConnection(error) {
  if (error instanceof UserFacingError || !datasource.url) return error;
  return rethrowConnection(error, datasource.url);
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    return;
  }
  if (message.method === undefined && message.id !== undefined && outgoing.has(message.id)) {
    const resolve = outgoing.get(message.id);
    outgoing.delete(message.id);
    resolve(message.result);
    return;
  }
  if (typeof message.method !== "string") return;
  const job = queue.then(() => handle(message));
  queue = job.catch(() => {});
  pending.add(job);
  job.finally(() => pending.delete(job));
});

rl.on("close", async () => {
  // stdin closed: the CLI is done with us. Finish in-flight work, release connections, exit.
  await Promise.allSettled([...pending]);
  if (enginePromise) {
    try {
      const engine = await enginePromise;
      engine.free();
    } catch {
      // engine never started
    }
  }
  await Promise.all([...openPools].map(endPool));
  process.exit(0);
});
