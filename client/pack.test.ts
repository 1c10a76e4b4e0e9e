// The client as a user gets it: `npm pack` the package, install the tarball into an empty project,
// type-check the examples the tarball ships (dist/examples/, importing the package by name: only
// what the tarball contains) under TypeScript strict, with the package's own .d.ts checked too (no
// skipLibCheck), compile them, bundle the package for browsers (esbuild, and a Vite build), and run
// the examples with Node against `npm start`: follow-wallet must follow a wallet live (a PLACED and
// a SETTLED line, the proof verified), wallet-history must page through its history over hash-only
// GETs without a duplicate. Their output is printed in the test log.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import ts from "typescript";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { startService, type RunningService } from "../test/service.ts";
import { spawnChild, type Spawned } from "../test/spawn.ts";

const CLIENT_DIR = fileURLToPath(new URL(".", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as {
  name: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const rootManifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
// Vite comes with vitest; the Vite build is part of the check whenever it is there.
const VITE = (() => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("vite/package.json")), "bin", "vite.js");
  } catch {
    return undefined;
  }
})();
const wallet = privateKeyToAccount(DEV_PLAYER_KEYS[0]!).address.toLowerCase();

let work: string;
let service: RunningService | undefined;
let example: Spawned | undefined;

/** Runs a command to its end; rejects with its output when it fails. */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  const child = spawnChild({ command, args, cwd, name: `${command} ${args[0] ?? ""}`, env: { npm_config_update_notifier: "false" } });
  const { code } = await child.closed;
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${code}:\n${child.stdout()}\n${child.stderr()}`);
  return child.stdout();
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "client-pack-"));
});

afterAll(async () => {
  await example?.stop();
  await service?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the client package", () => {
  it("imports nothing from outside its folder, and only packages it declares", () => {
    const files = readdirSync(CLIENT_DIR, { recursive: true, encoding: "utf8" }).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.startsWith("dist") && !file.startsWith("examples") && !file.startsWith("scripts"),
    );
    expect(files).toEqual(expect.arrayContaining(["index.ts", "react.ts", join("wire", "events.ts")]));
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]);
    const problems = files.flatMap((file) =>
      ts.preProcessFile(readFileSync(join(CLIENT_DIR, file), "utf8"), true, true).importedFiles.flatMap(({ fileName: specifier }) => {
        if (specifier.startsWith("."))
          return relative(CLIENT_DIR, resolve(CLIENT_DIR, dirname(file), specifier)).startsWith("..") ? [`${file} → ${specifier}`] : [];
        const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
        return declared.has(name) ? [] : [`${file} → ${specifier} (not in client/package.json)`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it("installs from its tarball into an empty project, and its examples run: one follows a wallet live, one pages through its history", async () => {
    // The service starts while the package is packed and installed.
    const starting = startService();
    starting.then((running) => (service = running)).catch(() => undefined);

    await run("npm", ["pack", "--silent", "--pack-destination", work], CLIENT_DIR);
    const tarballs = readdirSync(work).filter((file) => file.endsWith(".tgz"));
    expect(tarballs).toHaveLength(1);

    const scratch = join(work, "scratch");
    mkdirSync(scratch);
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
    await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        join(work, tarballs[0]!),
        `snarkjs@${manifest.peerDependencies.snarkjs}`,
        `@types/node@${rootManifest.devDependencies["@types/node"]}`,
      ],
      scratch,
    );
    const installed = join(scratch, "node_modules", ...manifest.name.split("/"));
    const files = readdirSync(join(installed, "dist"), { recursive: true, encoding: "utf8" });
    expect(files).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "react.js", "react.d.ts", "snarkjs.js"]));
    expect(
      files.filter((file) => file.endsWith(".test.js") || (!file.startsWith(`examples${sep}`) && file.endsWith(".ts") !== file.endsWith(".d.ts"))),
    ).toEqual([]);

    // The examples as shipped import only Node's built-ins and what the tarball exports.
    const examples = readdirSync(join(installed, "dist", "examples")).filter((file) => file.endsWith(".ts"));
    expect(examples.sort()).toEqual(
      readdirSync(join(CLIENT_DIR, "examples"))
        .filter((file) => file.endsWith(".ts"))
        .sort(),
    );
    expect(examples).toEqual(expect.arrayContaining(["follow-wallet.ts", "wallet-history.ts"]));
    const installedManifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const exported = new Set(Object.keys(installedManifest.exports).map((subpath) => join(manifest.name, subpath)));
    for (const file of examples) {
      const source = readFileSync(join(installed, "dist", "examples", file), "utf8");
      const imports = ts.preProcessFile(source, true, true).importedFiles.map(({ fileName }) => fileName);
      expect(
        imports.filter((specifier) => !specifier.startsWith("node:") && !exported.has(specifier)),
        file,
      ).toEqual([]);
      writeFileSync(join(scratch, file), source);
    }
    writeFileSync(
      join(scratch, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          types: ["node"],
          outDir: "out",
        },
        files: examples,
      }),
    );
    await run(process.execPath, [TSC, "-p", scratch], scratch);

    // A browser bundler takes the package as installed: no Node built-ins, no snarkjs, react left to the app.
    writeFileSync(
      join(scratch, "page.ts"),
      `import { createGraphQLClient, openBetsFeed, verifyBetProof } from "${manifest.name}";\nimport { usePlayerBets } from "${manifest.name}/react";\nconsole.log(createGraphQLClient, openBetsFeed, verifyBetProof, usePlayerBets);\n`,
    );
    const bundle = await build({
      entryPoints: [join(scratch, "page.ts")],
      absWorkingDir: scratch,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      external: ["react"],
      logLevel: "silent",
    });
    const bundled = bundle.outputFiles[0]!.text;
    expect(bundled).toContain("bets:subscribe");
    expect(bundled).not.toMatch(/from ?"node:|require\("node:|snarkjs"/);
    if (VITE) {
      // The same page through Vite's production build (library mode: react stays the app's).
      writeFileSync(
        join(scratch, "vite.config.mjs"),
        `export default { logLevel: "warn", build: { outDir: "vite-out", minify: false, lib: { entry: "page.ts", formats: ["es"], fileName: "page" }, rollupOptions: { external: ["react"] } } };\n`,
      );
      await run(process.execPath, [VITE, "build", "--config", "vite.config.mjs"], scratch);
      const viteBundle = readdirSync(join(scratch, "vite-out"))
        .filter((file) => file.endsWith(".js"))
        .map((file) => readFileSync(join(scratch, "vite-out", file), "utf8"))
        .join("\n");
      expect(viteBundle).toContain("bets:subscribe");
      expect(viteBundle).not.toMatch(/from ?"node:|require\("node:|snarkjs"/);
      console.log(`Vite build of the installed package for browsers: ${viteBundle.length} bytes, no Node built-in, no snarkjs`);
    }

    const running = await starting;
    example = spawnChild({ args: [join(scratch, "out", "follow-wallet.js"), wallet, "--api", running.url], cwd: scratch, name: "follow-wallet" });
    await example.waitForLine((line) => / PLACED +chain \d+ bet \d+/.test(line), 90_000, "a PLACED line");
    await example.waitForLine((line) => / SETTLED +chain \d+ bet \d+/.test(line), 90_000, "a SETTLED line");
    await example.waitForLine((line) => /proof of chain 31337 bet \d+: verified/.test(line), 60_000, "a verified proof");
    // The demo's permissive chain (1337) settles some bad proofs: refused there, and only there.
    expect(example.stdout()).not.toMatch(/proof of chain 31337 bet \d+: NOT verified|refused/);
    // A few settled bets, so that wallet-history below walks more than one page.
    await expect
      .poll(() => example!.stdout().match(/ SETTLED +chain \d+ bet \d+/g)?.length ?? 0, { timeout: 120_000, interval: 1_000 })
      .toBeGreaterThanOrEqual(3);
    await example.stop();
    console.log(`examples/follow-wallet.ts ${wallet} --api ${running.url}:\n${example.stdout()}`);

    // The wallet's settled history, page by page over hash-only GETs, then read "not before" its heads.
    const history = await run(process.execPath, [join(scratch, "out", "wallet-history.js"), wallet, "--api", running.url, "--first", "2"], scratch);
    console.log(`examples/wallet-history.ts ${wallet} --api ${running.url} --first 2:\n${history}`);
    const summary = /^(\d+) SETTLED bets of 0x[0-9a-f]{40} in (\d+) pages \((\d+) distinct\)$/m.exec(history);
    expect(summary, history).not.toBeNull();
    const [, walked, pages, distinct] = summary!.map(Number);
    expect(walked).toBeGreaterThanOrEqual(3);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(distinct).toBe(walked);
    expect(pages).toBe(history.match(/^page \d+: /gm)?.length);
    expect(history).toMatch(/^read at chain 31337 block \d+ \(0x[0-9a-f]{64}\)$/m);
    expect(history).toMatch(/^not before those heads: \d+ SETTLED bets/m);
    // A hash-only GET for every request (pages, the two reads); the first missed, and the text went once (POST) to register it.
    const sent = /^requests: (\d+) hash-only GETs, (\d+) with the query text$/m.exec(history);
    expect(sent, history).not.toBeNull();
    expect(Number(sent![1])).toBe(pages! + 2);
    expect(Number(sent![2])).toBe(1);
  }, 300_000);
});
