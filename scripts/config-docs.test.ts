import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../core/config.ts";
import { ENV_EXAMPLE, README, renderConfigTables, renderEnvExample, staleConfigDocs, withConfigTables } from "./config-docs.ts";

// `.env.example` and the README's configuration tables are generated from core/config.ts; this
// fails when someone changes one without the other (run `npm run config:docs`).

describe("configuration docs", () => {
  it("are current with the schema", () => {
    expect(staleConfigDocs()).toEqual([]);
  });

  it("list every variable with its default", () => {
    const example = renderEnvExample();
    const tables = renderConfigTables();
    for (const [name, variable] of Object.entries(CONFIG_VARIABLES)) {
      expect(example).toMatch(new RegExp(`^(# )?${name}=${(variable.default ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
      expect(tables).toMatch(new RegExp(`^\\| \`${name}\` +\\| `, "m"));
    }
  });

  it("notice a stale README block or .env.example", () => {
    const readme = readFileSync(README, "utf8");
    const tampered = readme.replace(/(\| `PORT` +\| )`4000`/, "$1`4001`");
    expect(tampered).not.toBe(readme);
    expect(withConfigTables(tampered)).toBe(readme);
    expect(readFileSync(ENV_EXAMPLE, "utf8")).toBe(renderEnvExample());
  });
});
