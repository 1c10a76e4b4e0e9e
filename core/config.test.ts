import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, subgraphUrlOverrides } from "./config.ts";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ NODE_ENV: "development", HOST: "127.0.0.1", PORT: 4000, DATA_DIR: "./.data", MAX_BODY_BYTES: 65536 });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it("treats empty values as unset, as .env.example writes them", () => {
    expect(loadConfig({ DATABASE_URL: "", REDIS_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("refuses bad values, listing every problem at once", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "99999", DATABASE_URL: "mysql://x@y/z", NODE_ENV: "staging", MAX_BODY_BYTES: "-1" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ["PORT", "DATABASE_URL", "NODE_ENV", "MAX_BODY_BYTES"]) expect(message).toContain(name);
  });

  it("takes subgraph routing overrides by name", () => {
    const config = loadConfig({ HISTORY_SUBGRAPH_URL: "http://history:4003/graphql" });
    expect(subgraphUrlOverrides(config)).toEqual({ history: "http://history:4003/graphql" });
  });
});
