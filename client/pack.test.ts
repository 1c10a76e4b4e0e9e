// The client as a user gets it: `npm pack` the package, install the tarball into an empty project,
// type-check a copy of examples/follow-wallet.ts that imports the package by name (with the
// package's own .d.ts checked too: no skipLibCheck), compile it, and run it with Node against
// `npm start`: it must follow a wallet live (a PLACED and a SETTLED line, the proof verified).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
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
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.startsWith("dist") && !file.startsWith("examples"),
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

  it("installs from its tarball into an empty project, and its example follows a wallet live", async () => {
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
    expect(files.filter((file) => file.endsWith(".test.js") || file.endsWith(".ts") !== file.endsWith(".d.ts"))).toEqual([]);

    // The example as a user would write it: the package by name, nothing relative.
    const source = readFileSync(join(CLIENT_DIR, "examples", "follow-wallet.ts"), "utf8")
      .replaceAll('from "../index.ts"', `from "${manifest.name}"`)
      .replaceAll('from "../snarkjs.ts"', `from "${manifest.name}/snarkjs"`);
    expect(source).not.toMatch(/from "\.\.?\//);
    writeFileSync(join(scratch, "follow-wallet.ts"), source);
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
        files: ["follow-wallet.ts"],
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

    const running = await starting;
    example = spawnChild({ args: [join(scratch, "out", "follow-wallet.js"), wallet, "--api", running.url], cwd: scratch, name: "follow-wallet" });
    await example.waitForLine((line) => / PLACED +chain \d+ bet \d+/.test(line), 90_000, "a PLACED line");
    await example.waitForLine((line) => / SETTLED +chain \d+ bet \d+/.test(line), 90_000, "a SETTLED line");
    await example.waitForLine((line) => /proof of chain 31337 bet \d+: verified/.test(line), 60_000, "a verified proof");
    // The demo's permissive chain (1337) settles some bad proofs: refused there, and only there.
    expect(example.stdout()).not.toMatch(/proof of chain 31337 bet \d+: NOT verified|refused/);
  }, 300_000);
});
