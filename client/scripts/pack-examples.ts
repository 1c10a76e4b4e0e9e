// `npm run build` (so `npm pack`): the examples as the tarball ships them, in dist/examples/. In
// this repository they import the package's sources ("../index.ts"); the shipped copies import the
// package by name, so they use only what the tarball contains (client/pack.test.ts runs them from
// an installed tarball).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLIENT_DIR = fileURLToPath(new URL("..", import.meta.url));
const { name } = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as { name: string };
/** The package's sources an example may import → the export that serves them. */
const ENTRY_POINTS: Record<string, string> = { "../index.ts": name, "../snarkjs.ts": `${name}/snarkjs`, "../react.ts": `${name}/react` };

const source = join(CLIENT_DIR, "examples");
const target = join(CLIENT_DIR, "dist", "examples");
mkdirSync(target, { recursive: true });
for (const file of readdirSync(source).filter((entry) => entry.endsWith(".ts"))) {
  let text = readFileSync(join(source, file), "utf8");
  for (const [relative, exported] of Object.entries(ENTRY_POINTS)) text = text.replaceAll(`from "${relative}"`, `from "${exported}"`);
  const left = /from "(\.[^"]*)"/.exec(text);
  if (left) throw new Error(`examples/${file} imports ${left[1]}, which the package does not export`);
  writeFileSync(join(target, file), text);
}
