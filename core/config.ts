import { z } from "zod";

// Every environment variable the services read, parsed once at start-up. `.env.example` lists
// them with these defaults; only `main.ts` files and scripts call `loadConfig`.

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const optionalUrl = z.string().url().optional().or(z.literal("").transform(() => undefined));

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: port.default(4000),
  DATABASE_URL: optionalUrl.refine((url) => !url || /^postgres(ql)?:\/\//.test(url), "DATABASE_URL must be a postgres:// URL"),
  DATA_DIR: z.string().min(1).default("./.data"),
  REDIS_URL: optionalUrl.refine((url) => !url || /^rediss?:\/\//.test(url), "REDIS_URL must be a redis:// URL"),
  SUPERGRAPH_PATH: z.string().min(1).default("./supergraph.graphql"),
  NETWORKS_SUBGRAPH_URL: optionalUrl,
  RESULTS_SUBGRAPH_URL: optionalUrl,
  HISTORY_SUBGRAPH_URL: optionalUrl,
  MAX_BODY_BYTES: positiveInt.default(64 * 1024),
  HEALTH_MAX_LAG_BLOCKS: positiveInt.default(64),
  HEALTH_MAX_STALENESS_SECONDS: positiveInt.default(300),
  MAX_QUERY_DEPTH: positiveInt.default(8),
  MAX_QUERY_ALIASES: positiveInt.default(30),
  MAX_QUERY_COST: positiveInt.default(5000),
  RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(300),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(10),
  /** Requests a client may send at once after idling (the bucket's size); the window's rate still holds. */
  RATE_LIMIT_BURST: positiveInt.default(60),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /** Gateway whole-response cache for answers kept a minute or longer (gateway/response-cache.ts). */
  RESPONSE_CACHE: z.enum(["on", "off"]).default("on").transform((v) => v === "on"),
  /** Bounds of the in-process store (used without REDIS_URL): entries and megabytes. */
  RESPONSE_CACHE_MAX_ENTRIES: positiveInt.default(10_000),
  RESPONSE_CACHE_MAX_MB: positiveInt.default(64),
  RESPONSE_CACHE_REDIS_PREFIX: z.string().min(1).default("responsecache:"),
  /** How often each gateway re-reads the data generation (indexer resets), which keys every entry. */
  RESPONSE_CACHE_GENERATION_POLL_MS: positiveInt.default(2_000),
  /** npm start: `chain` (local anvil + simulator + indexer), `fixtures` (the seeded demo set) or `none`. */
  /** gateway/main.ts: also serve Socket.IO at /socket.io on the API host (the second deployment form). */
  GATEWAY_SOCKETIO: z.enum(["0", "1"]).default("0").transform((v) => v === "1"),
  DEMO_MODE: z.enum(["chain", "fixtures", "none"]).default("chain"),
  /** npm start: index these real networks instead of the demo chain (a JSON file, see indexer/README.md). */
  NETWORKS_CONFIG: z.string().optional().transform((path) => (path ? path : undefined)),
  DEMO_BETS: z.coerce.number().int().min(0).default(120),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates an environment against a schema, listing every problem at once (ConfigError). */
export function parseEnv<TSchema extends z.ZodType>(envSchema: TSchema, env: Record<string, string | undefined>): z.infer<TSchema> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`).join("\n");
    throw new ConfigError(`Invalid configuration:\n${problems}`);
  }
  return parsed.data;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return parseEnv(schema, env);
}

/** Subgraph routing URLs from the environment override those in the supergraph. */
export function subgraphUrlOverrides(config: Config): Record<string, string> {
  const overrides: Record<string, string> = {};
  if (config.NETWORKS_SUBGRAPH_URL) overrides.networks = config.NETWORKS_SUBGRAPH_URL;
  if (config.RESULTS_SUBGRAPH_URL) overrides.results = config.RESULTS_SUBGRAPH_URL;
  if (config.HISTORY_SUBGRAPH_URL) overrides.history = config.HISTORY_SUBGRAPH_URL;
  return overrides;
}
