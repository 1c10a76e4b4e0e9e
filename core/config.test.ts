import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONFIG_SECTIONS, CONFIG_VARIABLES, ConfigError, loadConfig, type ConfigSection, type Variable } from "./config.ts";

const SECTIONS = Object.keys(CONFIG_SECTIONS) as ConfigSection[];
const variables = Object.entries(CONFIG_VARIABLES) as [string, Variable][];

function problemsOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("the configuration schema", () => {
  it("declares every variable once, in a section, with a description and a default that parses", () => {
    for (const [name, variable] of variables) {
      expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(SECTIONS).toContain(variable.section);
      expect(variable.description.length, name).toBeGreaterThan(10);
      expect(variable.description, name).not.toContain("\n");
      expect(variable.type.safeParse(variable.default).success, `${name}: default ${variable.default}`).toBe(true);
    }
    for (const section of SECTIONS)
      expect(
        variables.some(([, variable]) => variable.section === section),
        section,
      ).toBe(true);
  });

  it("reads only the sections asked for", () => {
    const gateway = loadConfig(["gateway"], {});
    expect(Object.keys(gateway).sort()).toEqual(
      variables
        .filter(([, v]) => v.section === "gateway")
        .map(([name]) => name)
        .sort(),
    );
    // An invalid variable of another section is not this process's business.
    expect(loadConfig(["shared"], { REALTIME_PATH: "no-slash" }).PORT).toBe(4000);
  });
});

describe("shared", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(["shared", "gateway"], {});
    expect(config).toMatchObject({ NODE_ENV: "development", LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: 4000, DATA_DIR: "./.data", MAX_BODY_BYTES: 65536 });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(config.METRICS_PORT).toBeUndefined();
  });

  it("treats empty values as unset, as .env.example writes them", () => {
    const config = loadConfig(["shared"], { DATABASE_URL: "", REDIS_URL: "", METRICS_PORT: "", HOST: "", LOG_LEVEL: "" });
    expect(config).toMatchObject({ DATABASE_URL: undefined, REDIS_URL: undefined, METRICS_PORT: undefined, HOST: "127.0.0.1", LOG_LEVEL: "info" });
  });

  it("refuses bad values, listing every problem at once", () => {
    const message = problemsOf(() =>
      loadConfig(["shared", "gateway"], {
        PORT: "99999",
        DATABASE_URL: "mysql://x@y/z",
        NODE_ENV: "staging",
        MAX_BODY_BYTES: "-1",
        REDIS_URL: "http://r",
        LOG_LEVEL: "loud",
      }),
    );
    for (const name of ["PORT", "DATABASE_URL", "NODE_ENV", "MAX_BODY_BYTES", "REDIS_URL", "LOG_LEVEL"]) expect(message).toContain(`  ${name}: `);
    expect(message).toMatch(/DATABASE_URL: must be a postgres:\/\/ URL/);
  });

  it("takes METRICS_PORT (indexer, publisher) as a port", () => {
    expect(loadConfig(["shared"], { METRICS_PORT: "9464" }).METRICS_PORT).toBe(9464);
    for (const bad of ["metrics", "70000", "-1"]) expect(problemsOf(() => loadConfig(["shared"], { METRICS_PORT: bad }))).toContain("METRICS_PORT");
  });

  it("never throws anything but a ConfigError, whatever the environment holds", () => {
    const names = variables.map(([name]) => name);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), fc.string({ maxLength: 40 })), (env) => {
        try {
          loadConfig(SECTIONS, env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          // Every problem names its variable.
          for (const line of (error as Error).message.split("\n").slice(1))
            expect(
              names.some((name) => line.startsWith(`  ${name}: `)),
              line,
            ).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("gateway and subgraphs", () => {
  it("maps switches and bounds", () => {
    expect(loadConfig(["shared", "gateway"], {})).toMatchObject({
      RESPONSE_CACHE: true,
      GATEWAY_SOCKETIO: false,
      RATE_LIMIT_POINTS: 10000,
      TRUST_PROXY_HOPS: 0,
    });
    expect(loadConfig(["shared", "gateway"], { RESPONSE_CACHE: "off", GATEWAY_SOCKETIO: "1", RATE_LIMIT_POINTS: "0" })).toMatchObject({
      RESPONSE_CACHE: false,
      GATEWAY_SOCKETIO: true,
      RATE_LIMIT_POINTS: 0,
    });
    expect(problemsOf(() => loadConfig(["shared", "gateway"], { TRUST_PROXY_HOPS: "11", GATEWAY_SOCKETIO: "yes" }))).toMatch(
      /TRUST_PROXY_HOPS[\s\S]*GATEWAY_SOCKETIO/,
    );
  });

  it("takes subgraph routing URLs", () => {
    expect(loadConfig(["subgraphs"], { HISTORY_SUBGRAPH_URL: "http://history:4003/graphql" })).toEqual({
      NETWORKS_SUBGRAPH_URL: undefined,
      RESULTS_SUBGRAPH_URL: undefined,
      HISTORY_SUBGRAPH_URL: "http://history:4003/graphql",
    });
    expect(problemsOf(() => loadConfig(["subgraphs"], { RESULTS_SUBGRAPH_URL: "results 4002" }))).toContain("RESULTS_SUBGRAPH_URL");
  });
});

describe("realtime and publisher", () => {
  it("parses REALTIME_* with the contract's defaults, and rejects nonsense", () => {
    const config = loadConfig(["realtime", "publisher"], {});
    expect(config).toMatchObject({
      REALTIME_PATH: "/ws",
      REALTIME_MAX_SUBSCRIPTIONS: 200,
      REALTIME_EVENTS_PER_SECOND: 20,
      REALTIME_MAX_MESSAGE_BYTES: 16384,
      REALTIME_MAX_BUFFERED_BYTES: 4 * 1024 * 1024,
      REALTIME_PUBLISHER: false,
      REALTIME_TRANSPORTS: "polling,websocket",
      REALTIME_FEED_TIMEOUT_MS: 5000,
      REALTIME_DRAIN_GRACE_MS: 10000,
      REALTIME_PRUNE_INTERVAL_MS: 60_000,
      REALTIME_PRUNE_BATCH_SIZE: 1_000,
    });
    expect(loadConfig(["realtime"], { REALTIME_FEED_TIMEOUT_MS: "0" }).REALTIME_FEED_TIMEOUT_MS).toBe(0);
    expect(loadConfig(["publisher"], { REALTIME_PRUNE_INTERVAL_MS: "0" }).REALTIME_PRUNE_INTERVAL_MS).toBe(0);
    expect(loadConfig(["realtime"], { REALTIME_MAX_BUFFERED_BYTES: "0" }).REALTIME_MAX_BUFFERED_BYTES).toBe(0);
    expect(loadConfig(["realtime"], { REALTIME_PUBLISHER: "1", REALTIME_PATH: "/socket.io" })).toMatchObject({
      REALTIME_PUBLISHER: true,
      REALTIME_PATH: "/socket.io",
    });
    expect(loadConfig(["realtime"], { REALTIME_PUBLISHER: "true" }).REALTIME_PUBLISHER).toBe(true);
    const message = problemsOf(() =>
      loadConfig(["realtime", "publisher"], {
        REALTIME_EVENTS_PER_SECOND: "0",
        REALTIME_PATH: "ws",
        REALTIME_DRAIN_GRACE_MS: "-1",
        REALTIME_PRUNE_BATCH_SIZE: "0",
        REALTIME_MAX_BUFFERED_BYTES: "1024",
      }),
    );
    for (const name of ["REALTIME_EVENTS_PER_SECOND", "REALTIME_PATH", "REALTIME_DRAIN_GRACE_MS", "REALTIME_PRUNE_BATCH_SIZE", "REALTIME_MAX_BUFFERED_BYTES"])
      expect(message).toContain(name);
  });
});

describe("indexer, start, tooling, test, bench", () => {
  it("parses each section's variables", () => {
    expect(loadConfig(["indexer"], {}).NETWORKS_CONFIG).toBeUndefined();
    expect(loadConfig(["indexer"], { NETWORKS_CONFIG: "n.json" }).NETWORKS_CONFIG).toBe("n.json");
    expect(loadConfig(["start"], {})).toEqual({ DEMO_MODE: "chain", DEMO_BETS: 120 });
    expect(problemsOf(() => loadConfig(["start"], { DEMO_MODE: "demo" }))).toContain("DEMO_MODE");
    expect(loadConfig(["tooling"], {})).toMatchObject({ PRISMA_OFFLINE_ENGINE: true, SCHEMA_ALLOW_BREAKING: false, SHADOW_DATABASE_URL: undefined });
    expect(loadConfig(["test"], {})).toEqual({
      TEST_DB: "pglite",
      TEST_DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/postgres",
      TEST_REDIS_URL: "redis://127.0.0.1:6379",
      TEST_LOG_LEVEL: "silent",
    });
    expect(loadConfig(["bench"], {})).toMatchObject({
      BENCH_HIVE_DEDUPE: true,
      BENCH_RESPONSE_CACHE: false,
    });
  });
});

describe("DATABASE_READ_URLS", () => {
  it("is a comma-separated list of postgres:// URLs, blanks dropped; unset or empty: none", () => {
    expect(loadConfig(["shared"], {}).DATABASE_READ_URLS).toEqual([]);
    expect(loadConfig(["shared"], { DATABASE_READ_URLS: "" }).DATABASE_READ_URLS).toEqual([]);
    expect(loadConfig(["shared"], { DATABASE_READ_URLS: " postgres://r@a:5432/bets , postgresql://r@b/bets," }).DATABASE_READ_URLS).toEqual([
      "postgres://r@a:5432/bets",
      "postgresql://r@b/bets",
    ]);
  });

  it("refuses anything that is not a postgres:// URL", () => {
    for (const value of ["redis://a:6379", "postgres://", "a,b", "postgres://r@a/bets;postgres://r@b/bets x"])
      expect(
        problemsOf(() => loadConfig(["shared"], { DATABASE_READ_URLS: value })),
        value,
      ).toContain("DATABASE_READ_URLS: must be postgres:// URLs");
  });
});

describe("DATABASE_READ_MAX_REPLAY_LAG_MS", () => {
  it("bounds a replica's replay lag in ms, 10 s by default; refuses 0 and non-numbers", () => {
    expect(loadConfig(["shared"], {}).DATABASE_READ_MAX_REPLAY_LAG_MS).toBe(10_000);
    expect(loadConfig(["shared"], { DATABASE_READ_MAX_REPLAY_LAG_MS: "2500" }).DATABASE_READ_MAX_REPLAY_LAG_MS).toBe(2_500);
    for (const value of ["0", "-1", "1s", "1.5"])
      expect(
        problemsOf(() => loadConfig(["shared"], { DATABASE_READ_MAX_REPLAY_LAG_MS: value })),
        value,
      ).toContain("DATABASE_READ_MAX_REPLAY_LAG_MS");
  });
});

describe("INDEXER_BENCH_SKIP_PROOF_VERIFICATION", () => {
  it("is off by default and may be turned on outside production (benchmarks)", () => {
    expect(loadConfig(["indexer"], {}).INDEXER_BENCH_SKIP_PROOF_VERIFICATION).toBe(false);
    for (const NODE_ENV of [undefined, "development", "test"])
      expect(loadConfig(["indexer"], { NODE_ENV, INDEXER_BENCH_SKIP_PROOF_VERIFICATION: "1" }).INDEXER_BENCH_SKIP_PROOF_VERIFICATION).toBe(true);
  });

  it("is refused by production configuration, whichever sections the process reads", () => {
    for (const sections of [["indexer"], ["shared", "indexer"], ["shared", "indexer", "start"]] as ConfigSection[][])
      expect(
        problemsOf(() => loadConfig(sections, { NODE_ENV: "production", INDEXER_BENCH_SKIP_PROOF_VERIFICATION: "1" })),
        sections.join(","),
      ).toContain("INDEXER_BENCH_SKIP_PROOF_VERIFICATION: benchmarks only, refused with NODE_ENV=production");
    expect(
      loadConfig(["shared", "indexer"], { NODE_ENV: "production", INDEXER_BENCH_SKIP_PROOF_VERIFICATION: "0" }).INDEXER_BENCH_SKIP_PROOF_VERIFICATION,
    ).toBe(false);
  });
});
