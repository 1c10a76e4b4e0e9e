// The image installs production dependencies only (`npm ci --omit=dev` in the Dockerfile): every
// program it runs — each compose service's command, the page build the Dockerfile runs, the
// healthcheck — must import nothing from devDependencies. esbuild walks each program's imports
// the way Node resolves them; a package missing from `dependencies` fails here instead of in a
// container at start.
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { loadCompose } from "../test/compose.ts";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const dockerfile = readFileSync("Dockerfile", "utf8");
const compose = loadCompose();

const programs = [
  ...new Set([
    ...Object.values(compose.services)
      .filter((service) => service.build === ".")
      .map((service) => service.command![2]!),
    "web/build.ts",
    "deploy/healthcheck.mjs",
    // Every command's --import: it loads tsx on a Node without type stripping.
    "bin/typescript.mjs",
  ]),
];

/** The npm packages a program imports, statically or dynamically, through its whole import graph. */
async function packagesImportedBy(entry: string): Promise<Map<string, string>> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
    outdir: "/nonexistent",
  });
  const packages = new Map<string, string>();
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (!imported.external || imported.path.startsWith("node:") || builtinModules.includes(imported.path.split("/")[0]!)) continue;
      const segments = imported.path.split("/");
      packages.set(imported.path.startsWith("@") ? segments.slice(0, 2).join("/") : segments[0]!, file);
    }
  }
  return packages;
}

describe("the production image", () => {
  it("installs production dependencies only and builds the page", () => {
    expect(dockerfile).toMatch(/RUN npm ci --omit=dev/);
    expect(dockerfile).toContain("RUN npm run build");
    expect(readFileSync(".dockerignore", "utf8").split("\n")).toEqual(expect.arrayContaining(["node_modules", ".git", ".data", ".env"]));
  });

  it("runs node itself as the main process, as every compose service does", () => {
    // Not `npx tsx`: npm got docker stop's SIGTERM and node died with the container, undrained.
    expect(dockerfile).toContain('CMD ["node", "--import=./bin/typescript.mjs", "bin/gateway.ts"]');
    expect(dockerfile).not.toMatch(/^(CMD|ENTRYPOINT) .*npx/m);
  });

  it.each(programs)("%s imports only production dependencies", async (program) => {
    const imported = await packagesImportedBy(program);
    const missing = [...imported].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (imported by ${file})`);
    expect(missing).toEqual([]);
    if (program.endsWith(".ts")) expect(imported.size).toBeGreaterThan(0);
  });
});
