// npm run schema:impact -- <subgraph> [--sdl=<file>] [--operations=<file>] [--supergraph=<file>]
// One team's loop (docs/guides/adding-a-field.md): its subgraph's SDL (by default its file as
// edited) composed with every other subgraph's, checked against the current supergraph (by default
// supergraph.graphql as committed at HEAD), and every recorded operation (by default the client
// package's) planned, validated and priced on both. Fails on a composition error or a finding;
// plan and price changes are reported, not refused.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { subgraphNamed } from "../subgraphs/registry.ts";
import { changeFindings, operationImpacts, recordedOperations } from "./plan-impact.ts";
import { composeSupergraph } from "./supergraph.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { sdl: { type: "string" }, operations: { type: "string", default: "client/operations.ts" }, supergraph: { type: "string" } },
});
const entry = subgraphNamed(positionals[0] ?? "");
if (!entry) {
  console.error("usage: npm run schema:impact -- <subgraph> [--sdl=<file>] [--operations=<file>] [--supergraph=<file>]");
  process.exit(2);
}
const before = values.supergraph
  ? readFileSync(values.supergraph, "utf8")
  : execFileSync("git", ["show", "HEAD:supergraph.graphql"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
const composed = composeSupergraph({ [entry.name]: readFileSync(values.sdl ?? entry.sdl, "utf8") });
if (composed.errors) {
  for (const error of composed.errors) console.error(`composition error: ${error}`);
  process.exit(1);
}
const findings = changeFindings(before, composed.supergraphSdl);
for (const finding of findings) console.error(finding);

const operations = recordedOperations(readFileSync(values.operations, "utf8"), values.operations);
const impacts = operationImpacts(before, composed.supergraphSdl, operations);
for (const impact of impacts) {
  const cost =
    impact.costAfter === undefined || impact.costAfter === impact.costBefore ? `cost ${impact.costBefore}` : `cost ${impact.costBefore} -> ${impact.costAfter}`;
  console.log(`${impact.verdict.padEnd(9)} ${impact.name} (${cost})`);
  if (impact.detail) console.log(impact.detail.replace(/^/gm, "    "));
}
const changed = impacts.filter((impact) => impact.verdict !== "unchanged").length;
console.log(`${entry.name}: ${operations.length} operations from ${values.operations}, ${changed} affected; ${findings.length} findings`);
if (findings.length > 0) process.exit(1);
