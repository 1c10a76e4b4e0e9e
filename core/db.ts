// The one database seam of every service: a Prisma client over PostgreSQL (@prisma/adapter-pg) or
// over embedded PGlite (pglite-prisma-adapter), optionally migrated first (prisma/migrate.ts).
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../prisma/generated/client.ts";
import { migratePglite, migratePostgres, splitSchemaParam } from "../prisma/migrate.ts";
import { cancelStatementsOnAbort } from "./cancellable-queries.ts";
import type { Logger } from "./logger.ts";
import { quoteIdent } from "./sql.ts";
import { waitAtMost } from "./wait-at-most.ts";
import { queryTraced, tracingEnabled } from "./tracing.ts";

export interface Database {
  prisma: PrismaClient;
  kind: "pglite" | "postgres";
  /** Round trip `SELECT 1` through Prisma; resolves to the latency in ms, throws when the database is down. */
  ping(): Promise<number>;
  /**
   * PostgreSQL only: the pool's connections (open, idle) and the statements waiting for one (what
   * the expensive lane protects: cheap reads should never wait). Undefined on PGlite.
   */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Disconnect Prisma and release the pool / shut PGlite down. Idempotent. */
  close(): Promise<void>;
  /**
   * LISTEN on `channel` (a plain lowercase identifier) and call `onNotify` with each payload. On
   * PostgreSQL a dedicated connection (outside the pool) that reconnects by itself, and calls
   * `onNotify("")` once after each reconnect since notifications may have been missed meanwhile; on
   * PGlite its `listen` API. Resolves once listening, to a function that stops.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * One hand-written read straight through the driver, not Prisma: for hot read paths where the
   * ORM's per-row work is most of the cost (bench/gateways.ts, bench/replay-cost.ts). On PostgreSQL
   * a named prepared statement (parsed and planned once per connection) when it has a name;
   * `onQuery` sees it as it sees Prisma's.
   * Cast numerics and int8 to text in the SQL: the drivers' own parsing of them differs.
   */
  read<Row>(statement: ReadStatement, values: readonly unknown[]): Promise<Row[]>;
}

/** An SQL statement for Database.read. */
export interface ReadStatement {
  /**
   * Unique per text in the process: prepared once per connection. None: planned with its values
   * each time (a statement whose text varies with its arguments would pile up prepared ones).
   */
  name?: string;
  text: string;
}

export interface OpenDatabaseOptions {
  /** postgres:// or postgresql:// URL (`?schema=name` selects a schema). Unset: PGlite. */
  url?: string;
  /** PGlite only: directory of the persistent database (created if missing). Unset: in memory. */
  dataDir?: string;
  logger?: Logger;
  /** Apply pending migrations (prisma/migrations) before returning. */
  migrate?: boolean;
  /** PostgreSQL only: connections in the pool (default 10). */
  poolSize?: number;
  /** PGlite only: use this instance instead of creating one (e.g. loaded from a dumped data dir). Closed by close(). */
  pglite?: PGlite;
  /** Called with every SQL statement Prisma sends and its parameters as JSON (tests count round trips with it). */
  onQuery?: (sql: string, params: string) => void;
  /**
   * PostgreSQL only: the server cancels a statement running longer (`statement_timeout`, lock waits
   * included; SQLSTATE 57014, answered as QUERY_TIMEOUT by core/errors.ts). Unset or 0: none.
   * PGlite ignores it: one embedded connection in this process, nothing could cancel a statement.
   */
  statementTimeoutMs?: number;
  /** PostgreSQL only: how long a new connection may take (default 5000 ms). */
  connectTimeoutMs?: number;
  /** PostgreSQL only: the driver's idle timeout (default 10 000 ms), which the pool's own connections never reach (tests shorten it to show that). */
  idleTimeoutMs?: number;
  /**
   * PostgreSQL only: a connection is closed once about this old (90–100 % of it, drawn per
   * connection), at once when idle, else when released; the next request that needs one opens a
   * new one. Default 1 800 s; tests shorten it.
   */
  maxLifetimeSeconds?: number;
  /**
   * PostgreSQL only: the client abandons a statement without an answer after this long (a stalled
   * server). Unset: never. A pool with it must not run transactions: after a timeout inside one,
   * adapter-pg hands the connection back to the pool still in it (serving pools run none).
   */
  queryTimeoutMs?: number;
  /** PostgreSQL only: `application_name` of the pool's connections (pg_stat_activity). */
  applicationName?: string;
  /**
   * PostgreSQL only: `max_parallel_workers_per_gather` of the pool's connections. Unset: the
   * server's (2 by default). The serving side sets 0: its lanes bound statements, not processes.
   */
  parallelWorkersPerGather?: number;
  /**
   * PostgreSQL only, for a read replica (core/read-replicas.ts): a statement outside a transaction
   * that cannot reach this server (refused, reset, timed out, shut down, cancelled by a recovery
   * conflict) runs again on `database` — another PostgreSQL database opened here — and
   * `onFailover` is told. Reads only: a statement is sent twice at most.
   */
  fallback?: { database: Database; onFailover(error: unknown): void };
}

/** Each PostgreSQL database's pool, for `fallback`. */
const pools = new WeakMap<Database, pg.Pool>();

const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE", "57P01", "57P02", "57P03", "40001"]);

/** True when `error` says the server could not be reached or dropped the statement, not that the statement was wrong. */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || code.startsWith("08"))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|Query read timeout|connect ECONNREFUSED/i.test(error.message);
}

/**
 * Sends `pool`'s statements to `target` when `pool`'s server cannot be reached. adapter-pg runs every
 * statement outside a transaction as `pool.query(config)`, one QueryConfig: that is the call wrapped.
 */
function failOver(pool: pg.Pool, target: pg.Pool, onFailover: (error: unknown) => void): void {
  const own = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
  const failing = async (config: pg.QueryConfig): Promise<pg.QueryResult> => {
    try {
      return await own(config);
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      onFailover(error);
      return target.query(config);
    }
  };
  pool.query = failing as typeof pool.query;
}

/** Wraps a pooled connection's `query` in a span per statement; the callback form (pg.Pool's own) included. */
function traceStatements(client: pg.PoolClient): void {
  type Query = (...args: unknown[]) => unknown;
  const query = client.query.bind(client) as Query;
  const traced: Query = (...args) => {
    const first = args[0];
    const text = typeof first === "string" ? first : typeof first === "object" && first !== null && "text" in first ? String(first.text) : "";
    const last = args.at(-1);
    if (typeof last === "function") {
      return queryTraced(
        text,
        () =>
          new Promise<void>((resolve) => {
            query(...args.slice(0, -1), (...results: unknown[]) => {
              resolve();
              (last as Query)(...results);
            });
          }),
      );
    }
    return queryTraced(text, () => query(...args) as Promise<unknown>);
  };
  Object.assign(client, { query: traced });
}

/** A Prisma client over a driver adapter, emitting query events only when someone listens. */
function createClient(adapter: PrismaPg | PrismaPGlite, onQuery: OpenDatabaseOptions["onQuery"]): PrismaClient {
  if (!onQuery) return new PrismaClient({ adapter });
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
  client.$on("query", (event) => onQuery(event.query, event.params));
  return client;
}

/**
 * TCP keepalive for every long-lived PostgreSQL connection (pools, LISTEN, locks, checks): probes
 * after 10 s idle find one whose server or network path vanished without a FIN or RST (a
 * failover, a dropped NAT entry). Without a delay the kernel's default (2 hours) applies.
 */
export const POSTGRES_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } as const;

/**
 * The one rule for `queryTimeoutMs`: how long a connection waits for a statement's answer before it
 * gives the server up (a server that keeps its connections but never answers: frozen, a half-open
 * link). A live server cancels the statement at `statementTimeoutMs` first; `marginMs` is for its
 * answer to arrive, or for whatever the caller does after it (a replica's fallback to the primary).
 * Undefined (never) without a statement timeout: nothing then bounds a statement that still runs.
 */
export function stalledServerDeadline(statementTimeoutMs: number, marginMs: number): number | undefined {
  return statementTimeoutMs > 0 ? statementTimeoutMs + marginMs : undefined;
}

/**
 * Ends a dedicated connection (LISTEN, a lock): politely, or by closing its socket after `ms`.
 * Over a path that died, or to a frozen server, the goodbye is never answered and `end()` would
 * wait for as long as the kernel retransmits (a publisher standing down waited with it: issue 21).
 */
export async function endClient(client: pg.Client, ms = 1_000): Promise<void> {
  await waitAtMost(client.end(), ms);
  // A no-op once ended; otherwise the socket goes without waiting for the server.
  client.connection.stream.destroy();
}

/** A connection's lifetime: `seconds` less up to a tenth, drawn per connection. */
const jitteredLifetime = (seconds: number) => seconds * (0.9 + 0.1 * Math.random());

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options) : openPglite(options);
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const { logger } = options;
  const { connectionString, schema } = splitSchemaParam(url);
  if (options.migrate) await migratePostgres(url, { logger });

  const poolSize = options.poolSize ?? 10;
  const maxLifetimeSeconds = options.maxLifetimeSeconds ?? 1_800;
  const startupOptions = [
    ...(schema ? [`-c search_path=${quoteIdent(schema)}`] : []),
    ...(options.parallelWorkersPerGather === undefined ? [] : [`-c max_parallel_workers_per_gather=${options.parallelWorkersPerGather}`]),
  ];
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // A fixed-size pool once warm (HikariCP's advice): connections a burst opened stay. Closed when
    // idle, they were opened again at the next burst, on a request's path: a new backend, its
    // catalog caches and every prepared statement again (bench:gateways' open-loop p99).
    min: poolSize,
    // Kept connections may sit idle for hours: keepalive (POSTGRES_KEEPALIVE), and a lifetime
    // (HikariCP's 30 min) so that none outlives a server-side change (a pooler's or load
    // balancer's limits, a role's settings) for long.
    ...POSTGRES_KEEPALIVE,
    maxLifetimeSeconds,
    // Each connection's own lifetime, jittered (pg-pool reads the option right after this hook,
    // and has no jitter of its own): connections a burst opened together would otherwise all be
    // closed in the same second every 30 minutes, and reopened together on requests' paths.
    onConnect: () => {
      pool.options.maxLifetimeSeconds = jitteredLifetime(maxLifetimeSeconds);
    },
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    ...(options.idleTimeoutMs ? { idleTimeoutMillis: options.idleTimeoutMs } : {}),
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    // adapter-pg ignores `?schema=`; its `schema` option qualifies Prisma's queries, and the
    // search_path makes raw queries (`$queryRaw`) land in the same schema.
    ...(startupOptions.length > 0 ? { options: startupOptions.join(" ") } : {}),
  });
  pool.on("error", (error) => logger?.warn({ err: error }, "idle PostgreSQL connection failed"));
  // Each SQL statement a span of its own when this process traces (core/tracing.ts).
  if (tracingEnabled()) pool.on("connect", traceStatements);
  if (options.fallback) {
    const target = pools.get(options.fallback.database);
    if (!target) throw new TypeError("openDatabase: `fallback` must be a PostgreSQL database opened by openDatabase");
    failOver(pool, target, options.fallback.onFailover);
  }
  cancelStatementsOnAbort(pool, connectionString);
  const prisma = createClient(new PrismaPg(pool, schema ? { schema } : undefined), options.onQuery);

  logger?.info({ kind: "postgres", host: safeHost(connectionString), schema: schema ?? "public" }, "database opened");
  let closed: Promise<void> | undefined;
  const database: Database = {
    prisma,
    kind: "postgres",
    ping: () => ping(prisma),
    listen: (channel, onNotify) => listenPostgres(connectionString, channel, onNotify, logger),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async read<Row>(statement: ReadStatement, values: readonly unknown[]) {
      options.onQuery?.(statement.text, JSON.stringify(values));
      const named = statement.name === undefined ? {} : { name: statement.name };
      return (await pool.query({ ...named, text: statement.text, values: [...values] })).rows as Row[];
    },
    close() {
      closed ??= (async () => {
        await prisma.$disconnect().catch(() => undefined);
        await pool.end();
      })();
      return closed;
    },
  };
  pools.set(database, pool);
  return database;
}

async function openPglite(options: OpenDatabaseOptions): Promise<Database> {
  const { logger } = options;
  let db = options.pglite;
  if (!db) {
    if (options.dataDir) {
      const dataDir = resolve(options.dataDir);
      mkdirSync(dataDir, { recursive: true });
      db = await PGlite.create({ dataDir });
    } else {
      db = await PGlite.create();
    }
  }
  const pglite = db;
  if (options.migrate) await migratePglite(pglite, { logger });

  const prisma = createClient(new PrismaPGlite(pglite), options.onQuery);
  logger?.info({ kind: "pglite", dataDir: options.dataDir ? resolve(options.dataDir) : "memory" }, "database opened");
  let closed: Promise<void> | undefined;
  return {
    prisma,
    kind: "pglite",
    ping: () => ping(prisma),
    listen: async (channel, onNotify) => {
      const unlisten = await pglite.listen(channel, onNotify);
      return async () => {
        if (!pglite.closed) await unlisten();
      };
    },
    async read<Row>(statement: ReadStatement, values: readonly unknown[]) {
      options.onQuery?.(statement.text, JSON.stringify(values));
      return (await pglite.query<Row>(statement.text, [...values])).rows;
    },
    close() {
      closed ??= (async () => {
        await prisma.$disconnect().catch(() => undefined);
        if (!pglite.closed) await pglite.close();
      })();
      return closed;
    },
  };
}

const LISTEN_RETRY_MS = [100, 500, 1_000, 2_000, 5_000];
const LISTEN_TIMEOUT_MS = 5_000;

/**
 * LISTEN on a dedicated connection. A lost connection is re-established with backoff and the
 * listener told (`onNotify("")`), since notifications sent meanwhile are gone.
 */
async function listenPostgres(
  connectionString: string,
  channel: string,
  onNotify: (payload: string) => void,
  logger: Logger | undefined,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new TypeError(`listen: "${channel}" is not a plain lowercase identifier`);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    // Bounded: over a path that died, or to a frozen server, the connect or the LISTEN never
    // completes, and its caller (a publisher taking the lead) would wait with it. Notifications are
    // not statements: query_timeout never touches them.
    const next = new pg.Client({
      connectionString,
      application_name: `listen:${channel}`,
      ...POSTGRES_KEEPALIVE,
      connectionTimeoutMillis: LISTEN_TIMEOUT_MS,
      query_timeout: LISTEN_TIMEOUT_MS,
    });
    next.on("notification", (message) => {
      if (message.channel === channel) onNotify(message.payload ?? "");
    });
    next.on("error", (error) => logger?.warn({ err: error, channel }, "LISTEN connection failed"));
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      await endClient(next);
      throw error;
    }
    next.once("end", () => {
      if (!stopped) reconnect(0);
    });
    client = next;
  };
  const reconnect = (attempt: number) => {
    client = undefined;
    const delay = LISTEN_RETRY_MS[Math.min(attempt, LISTEN_RETRY_MS.length - 1)]!;
    retry = setTimeout(() => {
      retry = undefined;
      if (stopped) return;
      connect().then(
        () => {
          logger?.info({ channel }, "LISTEN connection re-established");
          onNotify("");
        },
        () => reconnect(attempt + 1),
      );
    }, delay);
  };

  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const current = client;
    client = undefined;
    if (current) await endClient(current);
  };
}

async function ping(prisma: PrismaClient): Promise<number> {
  const started = performance.now();
  await prisma.$queryRaw`SELECT 1`;
  return performance.now() - started;
}

/** host:port/database of a URL, without credentials, for logs. */
function safeHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "?";
  }
}
