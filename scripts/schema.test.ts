import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBGRAPHS } from "../core/supergraph.ts";

// The schema check as a subgraph team meets it: in a throwaway git repository holding the SDL
// files and the committed supergraph, on `main` and on a branch that removes a field.

const root = resolve(".");
let repo: string;

function run(...args: string[]) {
  const result = spawnSync(join(root, "node_modules/.bin/tsx"), ["scripts/schema.ts", ...args], { cwd: repo, encoding: "utf8" });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
function git(...args: string[]) {
  execFileSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.invalid", ...args], { cwd: repo, stdio: "ignore" });
}

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "schema-check-"));
  for (const file of ["scripts/schema.ts", "core/supergraph.ts", "supergraph.graphql", "package.json", ...SUBGRAPHS.map((s) => s.sdl)]) {
    cpSync(join(root, file), join(repo, file), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(repo, "node_modules"));
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "base");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("npm run schema:check", () => {
  it("passes on main", () => {
    const { code, output } = run("check");
    expect(output).toContain("schema check passed");
    expect(code).toBe(0);
  });

  it("fails on a stale supergraph.graphql", () => {
    git("checkout", "-q", "-b", "stale");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("  ): BetConnection!\n", '  ): BetConnection!\n  "A new field."\n  betCount(wallet: Address!): Int!\n'));
    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/supergraph\.graphql is stale/);
    git("checkout", "-q", "--", ".");
    git("checkout", "-q", "main");
  });

  it("fails on a branch that removes a field, printing the finding, unless overridden", () => {
    git("checkout", "-q", "-b", "remove-field");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace(/\n  "Game id as recorded by the contract."\n  game: String!/, ""));
    expect(run("compose").code).toBe(0);
    git("commit", "-q", "-am", "remove Bet.game");

    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/breaking change against [0-9a-f]{12}: FIELD_REMOVED: Bet\.game was removed/);

    const overridden = run("check", "--allow-breaking");
    expect(overridden.code).toBe(0);
    expect(overridden.output).toMatch(/allowed breaking change/);
  });

  it("fails on a composition error", () => {
    git("checkout", "-q", "main");
    const sdl = join(repo, "subgraphs/results/results.graphql");
    // results now claims Bet.player too, with another type: the subgraphs no longer compose.
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("  result: BetResult\n", "  result: BetResult\n  player: Int\n"));
    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/composition error/);
    git("checkout", "-q", "--", ".");
  });
});
