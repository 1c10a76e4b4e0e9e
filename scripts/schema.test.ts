import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPOSED_SERVICES } from "./supergraph.ts";

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
  // What `tsx scripts/schema.ts` loads: the script, composition, the registry (its list; factories load on demand), the config parser.
  const sources = [
    "scripts/schema.ts",
    "scripts/schema-descriptions.ts",
    "scripts/schema-list-sizes.ts",
    "scripts/supergraph.ts",
    "gateway/cost-directives.ts",
    "subgraphs/registry.ts",
    "core/schema.ts",
    "core/config.ts",
    "core/config-types.ts",
    "core/config-variables.ts",
    "core/config-variables-realtime.ts",
  ];
  for (const file of [...sources, "supergraph.graphql", "package.json", ...COMPOSED_SERVICES.map((s) => s.sdl)]) {
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
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("type Query {\n", 'type Query {\n  "A new field."\n  betCount(wallet: Address!): Int!\n'));
    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/supergraph\.graphql is stale/);
    git("checkout", "-q", "--", ".");
    git("checkout", "-q", "main");
  });

  it("fails on an undescribed field or argument, naming each, even with the supergraph recomposed", () => {
    git("checkout", "-q", "-b", "undescribed");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("type Query {\n", "type Query {\n  betCount(wallet: Address!): Int!\n"));
    expect(run("compose").code).toBe(0);
    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toContain("undescribed: field Query.betCount has no description");
    expect(output).toContain("undescribed: argument Query.betCount(wallet:) has no description");
    expect(output).not.toMatch(/undescribed: (?!field Query\.betCount |argument Query\.betCount\(wallet:\) )/);
    expect(output).not.toMatch(/stale/);
    git("checkout", "-q", "--", ".");
    git("checkout", "-q", "main");
  });

  it("fails on a list of objects without a size, naming it, even with the supergraph recomposed", () => {
    git("checkout", "-q", "-b", "unsized");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    const field = '  "The newest bets."\n  recentBets("How many, 1..100." first: Int = 10): [Bet!]! @cost(weight: 10)';
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("type Query {\n", `type Query {\n${field}\n`));
    expect(run("compose").code).toBe(0);
    const unsized = run("check");
    expect(unsized.code).toBe(1);
    expect(unsized.output).toContain("unsized list: Query.recentBets returns a list of objects without a size");
    expect(unsized.output).not.toMatch(/unsized list: (?!Query\.recentBets )/);
    // The same field with its size passes.
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace(field, `${field} @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)`));
    expect(run("compose").code).toBe(0);
    const sized = run("check");
    expect(sized.output).toContain("schema check passed");
    expect(sized.code).toBe(0);
    git("checkout", "-q", "--", ".");
    git("checkout", "-q", "main");
  });

  it("fails on a branch that removes a field, printing the finding, unless overridden", () => {
    git("checkout", "-q", "-b", "remove-field");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace(/\n {2}"Game id as recorded by the contract."\n {2}game: String!/, ""));
    expect(run("compose").code).toBe(0);
    git("commit", "-q", "-am", "remove Bet.game");

    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/breaking change against [0-9a-f]{12}: FIELD_REMOVED: Bet\.game was removed/);

    const overridden = run("check", "--allow-breaking");
    expect(overridden.code).toBe(0);
    expect(overridden.output).toMatch(/allowed breaking change/);
  });

  it("on main itself, compares with the previous commit: a break committed straight to main fails", () => {
    git("checkout", "-q", "main");
    const sdl = join(repo, "subgraphs/history/history.graphql");
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace(/\n {2}"Game id as recorded by the contract."\n {2}game: String!/, ""));
    expect(run("compose").code).toBe(0);
    git("commit", "-q", "-am", "remove Bet.game on main");
    try {
      const previous = execFileSync("git", ["rev-parse", "HEAD~1"], { cwd: repo, encoding: "utf8" }).trim();
      const { code, output } = run("check");
      expect(output).toContain(`breaking change against ${previous.slice(0, 12)}: FIELD_REMOVED: Bet.game was removed`);
      expect(code).toBe(1);
      // The same commit checked out detached (as CI checks out a push to main) is still main.
      git("checkout", "-q", "--detach", "main");
      expect(run("check").code).toBe(1);
    } finally {
      git("checkout", "-q", "main");
      git("reset", "-q", "--hard", "HEAD~1");
    }
  });

  it("lets the removal of an already-deprecated field through without --allow-breaking, and nothing else", () => {
    git("checkout", "-q", "main");
    const base = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repo, encoding: "utf8" }).trim();
    const sdl = join(repo, "subgraphs/history/history.graphql");
    const original = readFileSync(sdl, "utf8");
    try {
      // Release 1, on main: Bet.game deprecated (not breaking).
      writeFileSync(sdl, original.replace(/\n( {2}"Game id as recorded by the contract."\n {2}game: String!)/, '\n$1 @deprecated(reason: "Use tokenInfo.")'));
      expect(run("compose").code).toBe(0);
      git("commit", "-q", "-am", "deprecate Bet.game");
      expect(run("check").code).toBe(0);

      // Release 2, on a branch: Bet.game removed (the documented path), and Bet.stake removed (not deprecated).
      git("checkout", "-q", "-b", "remove-deprecated");
      writeFileSync(sdl, original.replace(/\n {2}"Game id as recorded by the contract."\n {2}game: String!/, ""));
      expect(run("compose").code).toBe(0);
      git("commit", "-q", "-am", "remove deprecated Bet.game");
      const removal = run("check");
      expect(removal.output).toMatch(/removal of a deprecated element against [0-9a-f]{12}: FIELD_REMOVED: Bet\.game was removed/);
      expect(removal.output).not.toMatch(/^(allowed )?breaking change against/m);
      expect(removal.code).toBe(0);

      writeFileSync(sdl, readFileSync(sdl, "utf8").replace(/\n {2}"[^"\n]*"\n {2}stake: UInt256!/, ""));
      expect(run("compose").code).toBe(0);
      git("commit", "-q", "-am", "remove Bet.stake");
      const undeprecated = run("check");
      expect(undeprecated.output).toMatch(/breaking change against [0-9a-f]{12}: FIELD_REMOVED: Bet\.stake was removed/);
      expect(undeprecated.code).toBe(1);
    } finally {
      git("checkout", "-q", "-f", "main");
      git("reset", "-q", "--hard", base);
    }
  });

  it("fails on a composition error", () => {
    git("checkout", "-q", "main");
    const sdl = join(repo, "subgraphs/results/results.graphql");
    // results now claims Bet.player too, with another type: the subgraphs no longer compose.
    writeFileSync(sdl, readFileSync(sdl, "utf8").replace("  result: BetResult @shareable\n", "  result: BetResult @shareable\n  player: Int\n"));
    const { code, output } = run("check");
    expect(code).toBe(1);
    expect(output).toMatch(/composition error/);
    git("checkout", "-q", "--", ".");
  });
});
