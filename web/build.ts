// `npm run build`: the live page and GraphiQL into web/dist/ (git-ignored), which the API serves
// as files (web/server.ts). `npm start` runs it when the build is missing or stale, the Dockerfile
// at image build. The live page's script is web/page/main.ts with the client package and
// socket.io-client bundled by esbuild into one ES module; the HTML, the stylesheet and snarkjs'
// browser build are copied. GraphiQL is web/page/graphiql.ts with React and GraphiQL bundled the
// same way, its stylesheet (GraphiQL's, fonts inline) bundled from the CSS the script imports.
// web/dist/manifest.json records a SHA-256 of every input esbuild read and of every output, so a
// changed source, dependency or output file makes the build stale.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { GRAPHIQL_PATHS, LIVE_PAGE_DIST, LIVE_PAGE_PATHS, livePageFile } from "./server.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));
const MANIFEST = "manifest.json";

interface Manifest {
  /** Repository-relative path → SHA-256 of every file the build read, this script included. */
  inputs: Record<string, string>;
  /** dist-relative path → SHA-256 of every file the build wrote. */
  outputs: Record<string, string>;
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

function snarkjsBrowserBuild(): string {
  // The package's exports map hides its build folder; its CommonJS entry lives in that folder.
  return join(dirname(createRequire(import.meta.url).resolve("snarkjs")), "snarkjs.min.js");
}

/** Writes a file whole or not at all: concurrent builds (two `npm start`s) write the same bytes. */
function writeAtomically(path: string, bytes: Buffer | string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, path);
}

/** One browser entry bundled into an ES module (and a stylesheet when it imports CSS), in memory. */
function bundle(entry: string) {
  return build({
    entryPoints: [join(PAGE_DIR, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    legalComments: "none",
    write: false,
    outdir: join(ROOT, "web/dist/assets"),
    metafile: true,
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
    // GraphiQL's toolkit imports graphql-ws (an optional peer) for subscriptions, which this API has none of.
    alias: { "graphql-ws": "./web/page/no-graphql-ws.ts" },
  });
}

/** The text of the bundle's one output ending in `extension`. */
function output(result: Awaited<ReturnType<typeof bundle>>, extension: ".js" | ".css"): string {
  const found = result.outputFiles.filter((file) => file.path.endsWith(extension));
  if (found.length !== 1) throw new Error(`expected one ${extension} output, got ${found.length}`);
  return found[0]!.text;
}

/** Builds the live page and GraphiQL into `outDir` (default web/dist/) and returns the manifest. */
export async function buildLivePage(outDir: string = LIVE_PAGE_DIST): Promise<Manifest> {
  const [live, graphiql] = await Promise.all([bundle("main.ts"), bundle("graphiql.ts")]);
  const copied = {
    [LIVE_PAGE_PATHS.page]: join(PAGE_DIR, "index.html"),
    [LIVE_PAGE_PATHS.style]: join(PAGE_DIR, "style.css"),
    [LIVE_PAGE_PATHS.snarkjs]: snarkjsBrowserBuild(),
    [GRAPHIQL_PATHS.page]: join(PAGE_DIR, "graphiql.html"),
  };
  const files = new Map<string, Buffer | string>([
    [livePageFile(LIVE_PAGE_PATHS.script), output(live, ".js")],
    [livePageFile(GRAPHIQL_PATHS.script), output(graphiql, ".js")],
    [livePageFile(GRAPHIQL_PATHS.style), output(graphiql, ".css")],
  ]);
  for (const [path, source] of Object.entries(copied)) files.set(livePageFile(path), readFileSync(source));

  const inputPaths = [
    ...Object.keys(live.metafile.inputs),
    ...Object.keys(graphiql.metafile.inputs),
    ...Object.values(copied).map((path) => relative(ROOT, path)),
    relative(ROOT, fileURLToPath(import.meta.url)),
  ];
  const manifest: Manifest = {
    inputs: Object.fromEntries([...new Set(inputPaths)].sort().map((path) => [path, sha256(readFileSync(join(ROOT, path)))])),
    outputs: Object.fromEntries([...files].map(([file, bytes]) => [file, sha256(bytes)])),
  };
  for (const [file, bytes] of files) writeAtomically(join(outDir, file), bytes);
  writeAtomically(join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Why the build in `outDir` is missing or stale, or undefined when every input and output is as recorded. */
export function livePageStaleness(outDir: string = LIVE_PAGE_DIST): string | undefined {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(outDir, MANIFEST), "utf8")) as Manifest;
  } catch {
    return "not built";
  }
  const changed = (path: string, expected: string) => {
    try {
      return sha256(readFileSync(path)) !== expected;
    } catch {
      return true;
    }
  };
  for (const [path, hash] of Object.entries(manifest.inputs)) if (changed(join(ROOT, path), hash)) return `${path} changed`;
  for (const [file, hash] of Object.entries(manifest.outputs)) if (changed(join(outDir, file), hash)) return `${file} is missing or was changed`;
  return undefined;
}

/** Builds the live page when it is missing or stale (`npm start`); returns why it was built, or undefined. */
export async function ensureLivePageBuilt(outDir: string = LIVE_PAGE_DIST): Promise<string | undefined> {
  const reason = livePageStaleness(outDir);
  if (reason !== undefined) await buildLivePage(outDir);
  return reason;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now();
  const manifest = await buildLivePage();
  console.log(
    `built the live page and GraphiQL into web/dist/ in ${Math.round(performance.now() - started)} ms (${Object.keys(manifest.inputs).length} inputs)`,
  );
}
