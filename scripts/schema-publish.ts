// `npm run schema:publish [-- --out=DIR]`: composes every subgraph's SDL file and writes the
// artifact a schema registry's CDN serves to gateways that follow it (SUPERGRAPH_URL,
// gateway/supergraph-source.ts), default in dist/registry/:
//   supergraph.graphql — the supergraph: what SUPERGRAPH_URL points at (serve it with an ETag)
//   schema.graphql     — the public API schema (no federation machinery), as GET /schema.graphql serves it
//   hash               — the supergraph's SHA-256, hex: what /health and gateway_supergraph_info report
//   artifact.json      — all three and the subgraph names, in one document
// The files depend on the SDL alone (no timestamp), so publishing twice writes the same bytes. A
// supergraph the gateway would refuse (gateway/supergraph-source.ts supergraphProblem) is not written.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { printSchema } from "graphql";
import { apiSchemaOf } from "../core/schema.ts";
import { sha256Hex, supergraphProblem } from "../gateway/supergraph-source.ts";
import { COMPOSED_SERVICES, composeSupergraph } from "./supergraph.ts";

export interface PublishedArtifact {
  hash: string;
  subgraphs: string[];
  supergraph: string;
  schema: string;
}

/** The artifact of a composed supergraph; throws when the gateway would refuse it. */
export function artifactOf(supergraphSdl: string): PublishedArtifact {
  const subgraphs = COMPOSED_SERVICES.map(({ name }) => name);
  const problem = supergraphProblem(supergraphSdl, subgraphs);
  if (problem) throw new Error(`not publishable: ${problem}`);
  return { hash: sha256Hex(supergraphSdl), subgraphs, supergraph: supergraphSdl, schema: printSchema(apiSchemaOf(supergraphSdl)) };
}

/** Writes the artifact's files into `dir`, each whole (a CDN origin never serves half a file). */
export function writeArtifact(dir: string, artifact: PublishedArtifact): string[] {
  mkdirSync(dir, { recursive: true });
  const files: [string, string][] = [
    ["supergraph.graphql", artifact.supergraph],
    ["schema.graphql", artifact.schema],
    ["hash", `${artifact.hash}\n`],
    ["artifact.json", `${JSON.stringify(artifact, null, 2)}\n`],
  ];
  for (const [name, text] of files) {
    const path = join(dir, name);
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  }
  return files.map(([name]) => join(dir, name));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv.find((arg) => arg.startsWith("--out="))?.slice("--out=".length) ?? "dist/registry";
  const result = composeSupergraph();
  if (result.errors) {
    for (const error of result.errors) console.error(`composition error: ${error}`);
    process.exit(1);
  }
  let artifact: PublishedArtifact;
  try {
    artifact = artifactOf(result.supergraphSdl);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  let committed: string | undefined;
  try {
    committed = readFileSync("supergraph.graphql", "utf8");
  } catch {
    committed = undefined;
  }
  if (committed !== result.supergraphSdl)
    console.warn("supergraph.graphql differs from what the SDL files compose to: run `npm run schema:compose` and commit it");
  for (const path of writeArtifact(out, artifact)) console.log(`wrote ${path}`);
  console.log(`published supergraph ${artifact.hash} (${artifact.subgraphs.join(", ")})`);
}
