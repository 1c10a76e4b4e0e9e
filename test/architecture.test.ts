// The floor plan (docs/architecture.md), checked on every import of the source: the kernel (core/)
// imports no tier and no composition root; the tiers (gateway, subgraphs, realtime, indexer, web)
// do not import each other, except the Socket.IO wire contract realtime/events.ts; only composition
// roots (bin/, scripts/) import bin/; only they parse the configuration, and nothing reads one of
// its variables from process.env; each subgraph's SQL lives in its data.ts; and no module grows
// past 500 lines. Tests (*.test.ts), test support (test/) and benchmarks (bench/) may import anything.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../core/config.ts";

const TIERS = ["gateway", "subgraphs", "realtime", "indexer", "web"];
/** bin/, scripts/ and the tool configurations at the root (codegen.ts, prisma.config.ts, …). */
const COMPOSITION_ROOTS = ["bin", "scripts", ""];
const SHARED_CONTRACT = "realtime/events.ts";
const MAX_LINES = 500;

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts"], { encoding: "utf8" })
  .split("\n")
  .filter((path) => path !== "" && !path.split("/").includes("node_modules"));
const isGenerated = (path: string) => path.split("/").includes("generated");
/** Library and root code: what the import rules apply to. */
const sources = tracked.filter((path) => !isGenerated(path) && !path.endsWith(".test.ts") && !path.startsWith("test/") && !path.startsWith("bench/"));

const top = (path: string) => (path.includes("/") ? path.slice(0, path.indexOf("/")) : "");

/** Every module specifier of a file, as TypeScript reads them: imports, re-exports, import(). */
function importSpecifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** Repository-relative targets of a file's relative imports (package imports are not our layout). */
function localImports(path: string): string[] {
  return importSpecifiers(readFileSync(path, "utf8"))
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => normalize(join(dirname(path), specifier)));
}

/** Why `from` may not import `to`, or undefined when it may. */
function violation(from: string, to: string): string | undefined {
  const source = top(from);
  const target = top(to);
  if (target === "bin" && !COMPOSITION_ROOTS.includes(source)) return "only composition roots import bin/";
  if (source === "core" && (TIERS.includes(target) || COMPOSITION_ROOTS.includes(target))) return "core/ imports no tier and no composition root";
  if (COMPOSITION_ROOTS.includes(source) || source === target || to === SHARED_CONTRACT) return undefined;
  if (TIERS.includes(target)) return `${source} may not import the ${target} tier`;
  if (target === "scripts" && TIERS.includes(source)) return "a tier imports no composition root";
  return undefined;
}

describe("import rules", () => {
  it("parses every kind of module specifier", () => {
    const source = [
      'import a from "./a.ts";',
      'import type { B } from "../b.ts";',
      'import {\n  c,\n  type D,\n} from "./c.ts";',
      'export { e } from "./e.ts";',
      'export * from "./f.ts";',
      'import "./g.ts";',
      'const h = await import("./h.ts");',
      '// import x from "./commented.ts";',
      '/* import y from "./block.ts"; */',
      'const glob = "**/*.ts"; import i from "./i.ts"; const end = "*/";',
    ].join("\n");
    expect(importSpecifiers(source)).toEqual(["./a.ts", "../b.ts", "./c.ts", "./e.ts", "./f.ts", "./g.ts", "./h.ts", "./i.ts"]);
  });

  it("tells allowed imports from forbidden ones", () => {
    expect(violation("core/stack.ts", "gateway/server.ts")).toMatch(/core/);
    expect(violation("core/config.ts", "bin/wiring.ts")).toMatch(/bin/);
    expect(violation("gateway/main.ts", "realtime/runtime.ts")).toMatch(/realtime/);
    expect(violation("gateway/server.ts", "web/server.ts")).toMatch(/web/);
    expect(violation("realtime/health.ts", "gateway/health/report.ts")).toMatch(/gateway/);
    expect(violation("client/realtime.ts", "realtime/events.ts")).toBeUndefined();
    expect(violation("gateway/server.ts", "core/http.ts")).toBeUndefined();
    expect(violation("bin/gateway.ts", "realtime/runtime.ts")).toBeUndefined();
    expect(violation("scripts/seed.ts", "bin/wiring.ts")).toBeUndefined();
    expect(violation("subgraphs/history/context.ts", "subgraphs/kit/deps.ts")).toBeUndefined();
  });

  it("holds for every source file", () => {
    expect(sources.length).toBeGreaterThan(50);
    const broken = sources.flatMap((from) =>
      localImports(from).flatMap((to) => {
        const reason = violation(from, to);
        return reason ? [`${from} → ${to}: ${reason}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it("keeps every statement of a subgraph in its data.ts", () => {
    const subgraphCode = sources.filter((path) => /^subgraphs\/(?!kit\/)[^/]+\/.+/.test(path) && !path.endsWith("/data.ts"));
    expect(subgraphCode.length).toBeGreaterThan(10);
    const statements = subgraphCode.filter((path) => /\.prisma\b|\$queryRaw|\$executeRaw/.test(readFileSync(path, "utf8")));
    expect(statements).toEqual([]);
  });
});

describe("configuration", () => {
  const isCompositionRoot = (path: string) => COMPOSITION_ROOTS.includes(top(path));

  it("is parsed by composition roots only", () => {
    const parsing = sources.filter((path) => path !== "core/config.ts" && !isCompositionRoot(path) && /\bloadConfig\(/.test(readFileSync(path, "utf8")));
    expect(parsing).toEqual([]);
  });

  it("is never read from process.env directly (third-party variables aside)", () => {
    const ours = new Set(Object.keys(CONFIG_VARIABLES));
    const reads = sources
      .filter((path) => path !== "core/config.ts")
      .flatMap((path) =>
        [...readFileSync(path, "utf8").matchAll(/(?<!["'`])process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["'`]([A-Z][A-Z0-9_]*))/g)]
          .map((match) => (match[1] ?? match[2])!)
          .filter((name) => ours.has(name))
          .map((name) => `${path}: process.env.${name}`),
      );
    expect(reads).toEqual([]);
  });
});

describe("module size", () => {
  it(`keeps every module outside bench/ within ${MAX_LINES} lines`, () => {
    const measured = tracked.filter((path) => !isGenerated(path) && !path.startsWith("bench/"));
    const long = measured
      .map((path) => ({ path, lines: readFileSync(path, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ path, lines }) => `${path}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});

describe("test support", () => {
  it("lives under test/: no harness, suite or testing module inside a tier", () => {
    const misplaced = tracked.filter((path) => !path.startsWith("test/") && /(^|\/)(testing|suite|test-harness|harness)\.ts$/.test(path));
    expect(misplaced).toEqual([]);
  });

  // fork() (an IPC channel to a worker of the same script, bench/realtime.ts) is another tool.
  it("spawns child processes through one helper (test/spawn.ts)", () => {
    const spawners = tracked.filter(
      (path) =>
        (path.startsWith("test/") || path.startsWith("bench/") || path.endsWith(".test.ts")) &&
        path !== "test/spawn.ts" &&
        /\b(spawn|execFile)\(/.test(readFileSync(path, "utf8")),
    );
    expect(spawners).toEqual([]);
  });
});
