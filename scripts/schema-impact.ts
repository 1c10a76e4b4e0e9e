// npm run schema:impact -- <subgraph> [--sdl=<file>] [--operations=<file>] [--supergraph=<file>]
// One team's loop (docs/guides/adding-a-field.md): its subgraph's SDL (by default its file as
// edited) composed with every other subgraph's, checked against the current supergraph (by default
// supergraph.graphql as committed at HEAD), and every recorded operation planned, validated and
// priced on both. The operations: --operations=<file>; else, with SCHEMA_USAGE_URL, those the
// gateways recorded in the last SCHEMA_USAGE_DAYS days, each with its requests, and the usage rule
// of schema:check deciding the breaking changes; else the client package's. Fails on a composition
// error or a finding; plan and price changes are reported, not refused.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { subgraphNamed } from "../subgraphs/registry.ts";
import { changeFindings, operationImpacts, recordedOperations, type OperationImpact } from "./plan-impact.ts";
import { impactOnRecordedTraffic, usageRule, type TrafficImpact } from "./schema-usage-check.ts";
import { composeSupergraph } from "./supergraph.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { sdl: { type: "string" }, operations: { type: "string" }, supergraph: { type: "string" } },
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
const config = loadConfig(["tooling"]);
const usageUrl = config.SCHEMA_USAGE_URL;
const findings = changeFindings(before, composed.supergraphSdl, { usageDecidesBreaks: Boolean(usageUrl) });
for (const finding of findings) console.error(finding);

/** The usage rule's verdicts, printed with the other findings, before the operations. */
function noteUsageRule(rule: { findings: readonly string[]; passes: readonly string[] }): void {
  for (const pass of rule.passes) console.log(pass);
  for (const finding of rule.findings) console.error(finding);
  findings.push(...rule.findings);
}

function printImpact(impact: OperationImpact, requests?: bigint): void {
  const cost =
    impact.costAfter === undefined || impact.costAfter === impact.costBefore ? `cost ${impact.costBefore}` : `cost ${impact.costBefore} -> ${impact.costAfter}`;
  console.log(`${impact.verdict.padEnd(9)} ${impact.name} (${requests === undefined ? "" : `${requests} requests, `}${cost})`);
  if (impact.detail) console.log(impact.detail.replace(/^/gm, "    "));
}

let summary: string;
if (usageUrl && !values.operations) {
  const db = await openDatabase({ url: usageUrl, poolSize: 1, applicationName: "schema-impact" });
  try {
    const traffic = await impactOnRecordedTraffic({ db, days: config.SCHEMA_USAGE_DAYS, before, after: composed.supergraphSdl });
    noteUsageRule(traffic);
    for (const impact of traffic.impacts) printImpact(impact, impact.requests);
    for (const skipped of traffic.unplanned) console.log(`unplanned ${skipped.name} (${skipped.requests} requests): ${skipped.why}`);
    const affected = traffic.impacts.filter((impact) => impact.verdict !== "unchanged");
    const repriced = traffic.impacts.filter((impact) => impact.costAfter !== undefined && impact.costAfter !== impact.costBefore);
    const requests = (impacts: readonly TrafficImpact[]) => impacts.reduce((sum, impact) => sum + impact.requests, 0n);
    summary = `${traffic.impacts.length} operations recorded in the last ${config.SCHEMA_USAGE_DAYS} days, ${affected.length} affected (${requests(affected)} requests), ${repriced.length} repriced (${requests(repriced)} requests)`;
  } finally {
    await db.close();
  }
} else {
  if (usageUrl) {
    const db = await openDatabase({ url: usageUrl, poolSize: 1, applicationName: "schema-impact" });
    try {
      noteUsageRule(await usageRule({ db, days: config.SCHEMA_USAGE_DAYS, before, after: composed.supergraphSdl }));
    } finally {
      await db.close();
    }
  }
  const source = values.operations ?? "client/operations.ts";
  const operations = recordedOperations(readFileSync(source, "utf8"), source);
  const impacts = operationImpacts(before, composed.supergraphSdl, operations);
  for (const impact of impacts) printImpact(impact);
  summary = `${operations.length} operations from ${source}, ${impacts.filter((impact) => impact.verdict !== "unchanged").length} affected`;
}
console.log(`${entry.name}: ${summary}; ${findings.length} findings`);
if (findings.length > 0) process.exit(1);
