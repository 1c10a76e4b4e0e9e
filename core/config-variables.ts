import { z } from "zod";
import {
  variable,
  port,
  positiveInt,
  nonNegativeInt,
  logLevel,
  optionalUrl,
  postgresUrl,
  onOff,
  zeroOne,
  headerName,
  flag,
  type Variable,
} from "./config-types.ts";
import { REALTIME_VARIABLES } from "./config-variables-realtime.ts";

// Every environment variable of this repository, declared once: its type, its default (written as
// in the environment) and one line of description, in sections. Composition roots (bin/, scripts/,
// prisma.config.ts, test and bench support) call `loadConfig` with the sections they read; library
// code receives typed options. `.env.example` and the README's configuration table are generated
// from here (`npm run config:docs`). Variables that libraries read themselves (APOLLO_*, DEBUG, CI,
// PRISMA_*, …) are not ours and are not listed.

export const CONFIG_VARIABLES = {
  // ---------------------------------------------------------------------------------- shared
  NODE_ENV: variable("shared", z.enum(["development", "production", "test"]), "development", "`production` masks error details (never a stack trace)"),
  LOG_LEVEL: variable("shared", logLevel, "info", "pino level; logs are JSON lines"),
  HOST: variable("shared", z.string().min(1), "127.0.0.1", "address the process listens on (`0.0.0.0` in a container)"),
  PORT: variable("shared", port, "4000", "port of the gateway (`npm start`), a subgraph or a realtime node"),
  DATABASE_URL: variable("shared", postgresUrl, undefined, "PostgreSQL, `postgres://…`; unset: the embedded PGlite database in `DATA_DIR`"),
  DATA_DIR: variable("shared", z.string().min(1), "./.data", "PGlite data directory (migrated at start by `npm start` and the indexer)"),
  OTEL_TRACES_EXPORTER: variable(
    "shared",
    z.enum(["otlp", "none"]).optional(),
    undefined,
    "OpenTelemetry traces (core/tracing.ts): `otlp` sends them over OTLP/HTTP (JSON), `none` never; unset: on only when an OTLP endpoint below is set",
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(
    "shared",
    optionalUrl(/^https?:\/\//, "must be an http(s):// URL"),
    undefined,
    "OTLP collector base URL (`/v1/traces` is appended); with `otlp` and no endpoint: `http://localhost:4318`",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable(
    "shared",
    optionalUrl(/^https?:\/\//, "must be an http(s):// URL"),
    undefined,
    "OTLP traces URL, used as is (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)",
  ),
  OTEL_SERVICE_NAME: variable(
    "shared",
    z.string().min(1).optional(),
    undefined,
    "`service.name` of this process's spans; unset: the process's role (`gateway`, `subgraph-history`, …)",
  ),
  DATABASE_POOL_SIZE: variable(
    "shared",
    positiveInt.max(1000),
    "10",
    "PostgreSQL connections in the process's pool, kept once opened (plus one per LISTEN and one for the publisher's lock); see the connection budget in docs/guides/operating.md",
  ),
  DATABASE_MIGRATE_ON_START: variable(
    "shared",
    flag,
    "true",
    "the indexer and `npm start` apply pending migrations at start; `false` where a one-shot migrator owns the schema and the indexer's role may only write rows",
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: variable(
    "shared",
    nonNegativeInt,
    "5000",
    "subgraphs, CSV exports, gateways, realtime nodes and publishers: PostgreSQL cancels a read running longer, answered as `QUERY_TIMEOUT` (Socket.IO: `SERVICE_UNAVAILABLE`; a publisher stands down and retries); a server that has not answered 5 s after it (frozen, a half-open connection) is given up, answered as `SERVICE_UNAVAILABLE` (`0`: neither; PGlite: no effect)",
  ),
  EXPENSIVE_LANE_CONCURRENCY: variable(
    "shared",
    positiveInt.max(1000),
    "2",
    "subgraphs: expensive statements (counts and pages no index serves) running at once per process, i.e. pool connections they may hold; keep it well below `DATABASE_POOL_SIZE` (docs/guides/operating.md)",
  ),
  EXPENSIVE_LANE_PER_CLIENT: variable("shared", positiveInt.max(1000), "1", "subgraphs: expensive statements one client address runs at once"),
  EXPENSIVE_LANE_QUEUE_TIMEOUT_MS: variable(
    "shared",
    positiveInt,
    "5000",
    "subgraphs: how long an expensive statement may wait for its turn before `SERVICE_BUSY` (with `retryAfterSeconds`); as long as one statement may run (`DATABASE_STATEMENT_TIMEOUT_MS`), so that a request of the largest documented cost still passes alone",
  ),
  HTTP_WRITE_DEADLINE_MS: variable(
    "shared",
    nonNegativeInt,
    "30000",
    "an HTTP client that takes none of an answer's pending bytes for this long is cut off (`http_slow_reader_disconnects_total`); `0`: never",
  ),
  CURSOR_SECRET: variable(
    "shared",
    z.string().min(16).optional(),
    undefined,
    "key material the history subgraph signs page cursors with (replicas must share it); required with `NODE_ENV=production` (the history subgraph and `npm start` refuse to start without it); elsewhere, unset: derived from `DATABASE_URL`, or, without one, random per process (cursors then end with a restart)",
  ),
  CURSOR_SECRET_PREVIOUS: variable(
    "shared",
    z.string().min(16).optional(),
    undefined,
    "during a rotation of `CURSOR_SECRET`: the secret it replaces; cursors signed with it are still accepted, new ones are signed with `CURSOR_SECRET` (remove it to end the rotation; see docs/guides/operating.md)",
  ),
  DATABASE_READ_URLS: variable(
    "shared",
    z
      .string()
      .optional()
      .transform((v) =>
        (v ?? "")
          .split(",")
          .map((url) => url.trim())
          .filter((url) => url !== ""),
      )
      .refine((urls) => urls.every((url) => /^postgres(ql)?:\/\/[^/\s][^\s]*$/.test(url) && URL.canParse(url)), "must be postgres:// URLs, comma-separated"),
    undefined,
    "subgraphs: PostgreSQL streaming replicas to read from, comma-separated `postgres://…` URLs (the indexer, the outbox and migrations always use `DATABASE_URL`); see read replicas in docs/guides/operating.md",
  ),
  DATABASE_READ_MAX_LAG_BLOCKS: variable(
    "shared",
    nonNegativeInt,
    "12",
    "subgraphs: a replica whose indexed head is further behind the primary's on any chain is skipped (reads go to another replica or the primary)",
  ),
  DATABASE_READ_MAX_REPLAY_LAG_MS: variable(
    "shared",
    positiveInt,
    "10000",
    "subgraphs: a replica that, at its last check, had not replayed WAL the primary had written this long ago is skipped, even when no block was indexed (a paused or stuck replay); measured to the check interval",
  ),
  DATABASE_READ_CHECK_INTERVAL_MS: variable(
    "shared",
    positiveInt.min(100),
    "1000",
    "subgraphs: how often each replica's indexed heads and WAL replay position (and the primary's) are read; a replica without an answer for three intervals is skipped",
  ),
  DATABASE_READ_CONNECT_TIMEOUT_MS: variable(
    "shared",
    positiveInt,
    "1000",
    "subgraphs: connect timeout of replica connections and deadline of a check; a read the replica cannot answer is retried on the primary",
  ),
  REDIS_URL: variable(
    "shared",
    optionalUrl(/^rediss?:\/\//, "must be a redis:// URL"),
    undefined,
    "Redis shared by gateway replicas and realtime nodes; unset: in-process fallbacks",
  ),
  TRUST_PROXY_HOPS: variable(
    "shared",
    z.coerce.number().int().min(0).max(10),
    "0",
    "gateways and realtime nodes: proxies whose `X-Forwarded-For` entries are trusted to name the client (`0`: the peer address)",
  ),
  RATE_LIMIT_POINTS: variable(
    "shared",
    nonNegativeInt,
    "10000",
    "gateways and realtime nodes: each client IP's budget of cost points (GraphQL, CSV exports and Socket.IO replays pay from it) (`RATE_LIMITED`, HTTP 429, once spent); at least `MAX_QUERY_COST`; shared through Redis with `REDIS_URL`; `0`: off",
  ),
  RATE_LIMIT_POINTS_PER_SECOND: variable("shared", positiveInt, "1000", "cost points added back to each client's budget per second"),
  RATE_LIMIT_POINTS_INITIAL: variable(
    "shared",
    positiveInt,
    "5000",
    "points a client IP's budget starts with when it is new (or idle long enough to be forgotten), filling up to `RATE_LIMIT_POINTS` by the refill; at least `MAX_QUERY_COST` (and the realtime replay's prepayment); above `RATE_LIMIT_POINTS`: `RATE_LIMIT_POINTS`",
  ),
  METRICS_PORT: variable("shared", port.optional(), undefined, "indexer and publisher: `GET /metrics` on `HOST:METRICS_PORT`; unset: no listener"),

  // --------------------------------------------------------------------------------- gateway
  SUPERGRAPH_PATH: variable(
    "gateway",
    z.string().min(1),
    "./supergraph.graphql",
    "the committed, composed supergraph the gateway serves (reloaded when the file changes); unused with `SUPERGRAPH_URL`",
  ),
  SUPERGRAPH_URL: variable(
    "gateway",
    optionalUrl(/^https?:\/\//, "must be an http(s):// URL"),
    undefined,
    "a schema registry's endpoint serving the supergraph (what `npm run schema:publish` writes): the gateway follows it instead of `SUPERGRAPH_PATH`, polled with `If-None-Match`, refusing a supergraph that does not parse or lacks a subgraph it routes to; unset: the file",
  ),
  SUPERGRAPH_KEY: variable("gateway", z.string().min(1).optional(), undefined, "the registry's access key, sent in `SUPERGRAPH_KEY_HEADER` (never logged)"),
  SUPERGRAPH_KEY_HEADER: variable("gateway", headerName, "X-Registry-Key", "the header carrying `SUPERGRAPH_KEY` (e.g. `Authorization`)"),
  SUPERGRAPH_POLL_INTERVAL_MS: variable("gateway", positiveInt.min(100), "10000", "how often a gateway asks `SUPERGRAPH_URL` for a newer supergraph"),
  SUPERGRAPH_KEPT_PATH: variable(
    "gateway",
    z.string().min(1),
    "./.data/supergraph.registry.graphql",
    "with `SUPERGRAPH_URL`: where the last good supergraph from the registry is kept; a gateway starts from it while the registry is down, and refuses to start with neither",
  ),
  MAX_BODY_BYTES: variable("gateway", positiveInt, "65536", "largest accepted request body in bytes (HTTP 413 beyond)"),
  COMPRESSION_MIN_BYTES: variable(
    "gateway",
    nonNegativeInt,
    "1024",
    "answers of at least this many bytes are compressed (Brotli, else gzip) when the client accepts it; `0`: never",
  ),
  COMPRESSION_BROTLI_QUALITY: variable(
    "gateway",
    z.coerce.number().int().min(0).max(11),
    "4",
    "Brotli quality of compressed answers (0–11; higher costs far more CPU)",
  ),

  MAX_QUERY_DEPTH: variable("gateway", positiveInt, "8", "deepest accepted selection (`QUERY_TOO_COMPLEX`, HTTP 400 beyond)"),
  MAX_QUERY_ALIASES: variable("gateway", positiveInt, "30", "aliases per operation (`QUERY_TOO_COMPLEX` beyond)"),
  MAX_QUERY_COST: variable("gateway", positiveInt, "5000", "query cost, lists costing their page size (`QUERY_TOO_COMPLEX` beyond)"),
  RATE_LIMIT_MAX_IN_FLIGHT: variable(
    "gateway",
    nonNegativeInt,
    "8",
    "requests one client IP may have open at once in a gateway process (GraphQL, CSV exports, every route); the next is refused `RATE_LIMITED`, HTTP 429, `Retry-After: 1`; `0`: off",
  ),
  RATE_LIMIT_RUNNING_PER_CLIENT: variable("gateway", nonNegativeInt, "2", "of those, how many run at once; the rest wait their turn at the door; `0`: all"),
  RATE_LIMIT_RUNNING_PER_GATEWAY: variable(
    "gateway",
    nonNegativeInt,
    "16",
    "GraphQL requests running at once in a gateway process, all clients together; past it they wait for a seat, the clients that used the fewest lately first and addresses just met last; `0`: no bound (needs `RATE_LIMIT_MAX_IN_FLIGHT` on)",
  ),
  REDIS_COMMAND_TIMEOUT_MS: variable(
    "gateway",
    positiveInt,
    "150",
    "deadline of the gateway's Redis commands on a request path (rate limit, response cache); past it the request goes on without Redis",
  ),
  PERSISTED_QUERIES_MAX_ENTRIES: variable(
    "gateway",
    positiveInt,
    "20000",
    "automatic persisted queries kept in Redis, shared by every gateway (the oldest registrations go first); without `REDIS_URL` each gateway keeps its own in process",
  ),
  PERSISTED_QUERIES_TTL_SECONDS: variable("gateway", positiveInt, "86400", "how long a persisted query stays registered in Redis"),
  PERSISTED_QUERIES_REDIS_PREFIX: variable("gateway", z.string().min(1), "apq:", "key prefix of the persisted queries in Redis"),
  RESPONSE_CACHE: variable("gateway", onOff, "on", "the gateway's cache of answers kept a minute or longer (finalized bets, settings): `on` or `off`"),
  RESPONSE_CACHE_MAX_ENTRIES: variable(
    "gateway",
    positiveInt,
    "10000",
    "entries of the in-process response cache (used without `REDIS_URL` and `RESPONSE_CACHE_REDIS_URL`)",
  ),
  RESPONSE_CACHE_MAX_MB: variable("gateway", positiveInt, "64", "megabytes of the in-process response cache"),
  RESPONSE_CACHE_REDIS_PREFIX: variable(
    "gateway",
    z.string().min(1),
    "responsecache:",
    "key prefix of the response cache in Redis (change it to start afresh)",
  ),
  RESPONSE_CACHE_REDIS_URL: variable(
    "gateway",
    optionalUrl(/^rediss?:\/\//, "must be a redis:// URL"),
    undefined,
    "the response cache's own Redis (give it `maxmemory` and `allkeys-lru`; see docs/guides/operating.md); unset: the cache shares `REDIS_URL` with the rate limit",
  ),
  RESPONSE_CACHE_MAX_ENTRY_KB: variable(
    "gateway",
    positiveInt,
    "256",
    "bound of one response cache entry (kilobytes stored: the answer, its header line and its compressed forms); a larger answer is served but never stored",
  ),
  RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE: variable(
    "gateway",
    nonNegativeInt,
    "3000",
    "tokens of GraphQL documents a gateway has not seen before (each document counts 20 more) one client (address) may send per minute at no charge, across gateways (counted in `REDIS_URL`; per gateway while it is away); past them a new document costs 20 points a token; `0`: every new document is priced",
  ),
  RESPONSE_CACHE_NEW_ENTRIES_PER_MINUTE: variable(
    "gateway",
    positiveInt,
    "120",
    "new response cache entries one client (address) may create per minute, across gateways (counted in `REDIS_URL`; per gateway while it is away); past it its answers are served, not stored",
  ),
  RESPONSE_CACHE_GENERATION_POLL_MS: variable(
    "gateway",
    positiveInt,
    "2000",
    "how often a gateway re-reads the indexer's reset count, which keys every cache entry",
  ),
  CSV_EXPORT_POOL_SIZE: variable(
    "gateway",
    positiveInt.max(100),
    "2",
    "PostgreSQL connections of the CSV exports' own pool (under `DATABASE_STATEMENT_TIMEOUT_MS`): exports beyond it wait for one, never for the connections `/health` and the response cache use",
  ),
  SCHEMA_USAGE_DATABASE_URL: variable(
    "gateway",
    postgresUrl,
    undefined,
    "records which types, fields, arguments and enum values each operation uses, per hour, into this database (the primary, as the role `bets_usage_writer`, granted only the usage tables; one connection); unset: no recording",
  ),
  SCHEMA_USAGE_MAX_OPERATIONS: variable("gateway", positiveInt, "1000", "schema usage: distinct operations per minute; the rest count as `other`"),
  SCHEMA_USAGE_RETENTION_DAYS: variable("gateway", positiveInt, "90", "schema usage: rows older than this are deleted (hourly); above `SCHEMA_USAGE_DAYS`"),
  HEALTH_MAX_LAG_BLOCKS: variable("gateway", positiveInt, "64", "an indexer further behind the head is DEGRADED"),
  HEALTH_MAX_STALENESS_SECONDS: variable("gateway", positiveInt, "300", "an indexer silent for longer is DEGRADED"),
  GATEWAY_SOCKETIO: variable("gateway", zeroOne, "0", "`bin/gateway.ts`: `1` also serves Socket.IO at `/socket.io` on the API host (`npm start` always does)"),

  // ------------------------------------------------------------------------------- subgraphs
  NETWORKS_SUBGRAPH_URL: variable("subgraphs", z.string().url().optional(), undefined, "routing URL of the networks subgraph; unset: the supergraph's"),
  RESULTS_SUBGRAPH_URL: variable("subgraphs", z.string().url().optional(), undefined, "routing URL of the results subgraph; unset: the supergraph's"),
  HISTORY_SUBGRAPH_URL: variable("subgraphs", z.string().url().optional(), undefined, "routing URL of the history subgraph; unset: the supergraph's"),

  // -------------------------------------------------------------------------------- realtime
  ...REALTIME_VARIABLES,

  // --------------------------------------------------------------------------------- indexer
  NETWORKS_CONFIG: variable(
    "indexer",
    z.string().optional(),
    undefined,
    "the networks JSON file to index (`indexer/README.md`); required by `bin/indexer.ts`, replaces the demo chain in `npm start`",
  ),
  INDEXER_PROGRESS_INTERVAL_MS: variable(
    "indexer",
    positiveInt.min(100),
    "10000",
    "while a network backfills: one progress log line (block X of Y, percent, events/s, time left) and metrics update per interval",
  ),
  PROOF_VERIFY_WORKERS: variable(
    "indexer",
    nonNegativeInt.max(256).optional(),
    undefined,
    "worker threads that batch-verify settlement proofs off the sync loop (`0`: on the indexer's own thread); unset: one per core",
  ),
  INDEXER_BENCH_SKIP_PROOF_VERIFICATION: variable(
    "indexer",
    zeroOne,
    "0",
    "benchmarks only (`bench/ponder.ts`, the like-for-like backfill row): `1` stores every settlement `verified: false` without checking its proof; refused with `NODE_ENV=production`",
  ),

  // ----------------------------------------------------------------------------------- start
  DEMO_MODE: variable(
    "start",
    z.enum(["chain", "fixtures", "none"]),
    "chain",
    "`chain` (anvil + simulator + indexer), `fixtures` (the seeded demo set) or `none`",
  ),
  DEMO_BETS: variable("start", nonNegativeInt, "120", "`DEMO_MODE=fixtures`: bets of the fixture set written into an empty database (`0`: none)"),

  // --------------------------------------------------------------------------------- tooling
  SHADOW_DATABASE_URL: variable("tooling", postgresUrl, undefined, "Prisma's shadow database for `migrate dev`/`diff`; unset: Prisma makes a temporary one"),
  PRISMA_OFFLINE_ENGINE: variable("tooling", zeroOne, "1", "`0`: `npm run prisma` lets the Prisma CLI download its native engine instead of the offline one"),
  SCHEMA_BASE_REF: variable(
    "tooling",
    z.string().optional(),
    undefined,
    "`npm run schema:check`: git ref to check breaking changes against; unset: the merge-base with `main` (on `main`: the previous commit)",
  ),
  SCHEMA_USAGE_URL: variable(
    "tooling",
    postgresUrl,
    undefined,
    "`npm run schema:check`, `npm run schema:usage` and `npm run schema:impact`: the database the gateways record usage into (a reading role suffices); set, `schema:check` refuses a breaking change to anything used in the last `SCHEMA_USAGE_DAYS` and passes one nothing used, and `schema:impact` plans the operations recorded then; unset: git-only rules",
  ),
  SCHEMA_USAGE_DAYS: variable(
    "tooling",
    positiveInt,
    "30",
    "the usage window of `schema:check` and `schema:impact` and the default period of `npm run schema:usage`, in days",
  ),
  SCHEMA_ALLOW_BREAKING: variable("tooling", zeroOne, "0", "`npm run schema:check`: `1` lets a deliberate breaking change through"),

  // ------------------------------------------------------------------------------------ test
  TEST_DB: variable("test", z.enum(["pglite", "postgres"]), "pglite", "database of `*.db.test.ts` files (set by `vitest.config.ts` per project)"),
  TEST_DATABASE_URL: variable(
    "test",
    z.string().url(),
    "postgresql://postgres@127.0.0.1:5432/postgres",
    "PostgreSQL server of the tests (trust auth; a database per test)",
  ),
  TEST_REDIS_URL: variable("test", z.string().url(), "redis://127.0.0.1:6379", "Redis server of the tests (a random key prefix per run)"),
  TEST_LOG_LEVEL: variable("test", logLevel, "silent", "log level of the services tests start in process"),

  // ----------------------------------------------------------------------------------- bench
  BENCH_DATABASE_URL: variable(
    "bench",
    z.string().url(),
    "postgresql://postgres@127.0.0.1:5432/postgres",
    "PostgreSQL server of the benchmarks (they create and drop their own databases)",
  ),
  BENCH_REDIS_URL: variable("bench", z.string().url(), "redis://127.0.0.1:6379", "Redis server of the benchmarks"),
  BENCH_LOG_LEVEL: variable("bench", logLevel.optional(), undefined, "log level of benchmarked servers; unset: `warn` (the indexer benchmark: silent)"),
  BENCH_SERVE_DATABASE_URL: variable("bench", z.string().url().optional(), undefined, "set by a benchmark for its server child: the database to serve"),
  BENCH_SERVE_WATCH_STDIN: variable("bench", zeroOne, "0", "`1`: a server child stops when its stdin ends (its parent died)"),
  BENCH_SUBGRAPH_URLS: variable("bench", z.string().optional(), undefined, "set by `bench/gateways.ts` for its gateway children: the subgraph URLs (JSON)"),
  BENCH_RESPONSE_CACHE: variable("bench", zeroOne, "0", "`bench/serve-peer.ts apollo` and `bench/serve.ts`: `1` turns the in-process response cache on"),
  BENCH_SCHEMA_USAGE: variable("bench", zeroOne, "0", "`bench/serve.ts`: `1` records schema usage into its database (`bench/schema-usage.ts`)"),
  BENCH_HIVE_DEDUPE: variable("bench", zeroOne, "1", "`bench/serve-peer.ts hive`: `0` turns off Hive's merging of identical subgraph requests"),
  BENCH_ABUSE_ATTACKER: variable("bench", z.string().optional(), undefined, "set by `bench/abuse.ts` for its attacker children (JSON)"),
} satisfies Record<string, Variable>;
