// Schema registry tooling, run from scripts (never by introspection in production):
//   compose  — composes every subgraph's SDL file into the committed supergraph.graphql
//   check    — fails on a composition error, a stale supergraph.graphql, or a breaking change
//              against the supergraph of the base git ref (default: merge-base with main).
//              `--allow-breaking` (or SCHEMA_ALLOW_BREAKING=1) lets a deliberate break through.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { findBreakingChanges, findDangerousChanges } from "graphql";
import { apiSchemaOf, composeSupergraph, SUBGRAPHS } from "../core/supergraph.ts";

const SUPERGRAPH = "supergraph.graphql";

function compose(): string {
  const result = composeSupergraph();
  if (result.errors) {
    for (const error of result.errors) console.error(`composition error: ${error}`);
    process.exit(1);
  }
  for (const hint of result.hints) console.warn(`composition hint: ${hint}`);
  return result.supergraphSdl;
}

function git(...args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

function baseRef(): string | undefined {
  const explicit = process.argv.find((arg) => arg.startsWith("--base="))?.slice("--base=".length) ?? process.env.SCHEMA_BASE_REF;
  if (explicit) return explicit;
  const main = git("rev-parse", "--verify", "--quiet", "main") ?? git("rev-parse", "--verify", "--quiet", "origin/main");
  return (main && git("merge-base", "HEAD", main)) || git("rev-parse", "--verify", "--quiet", "HEAD");
}

function check(): void {
  const composed = compose();
  let failed = false;
  let committed = "";
  try {
    committed = readFileSync(SUPERGRAPH, "utf8");
  } catch {
    console.error(`${SUPERGRAPH} is missing: run \`npm run schema:compose\` and commit it`);
    failed = true;
  }
  if (committed && committed !== composed) {
    console.error(`${SUPERGRAPH} is stale: the subgraph SDL files compose to something else. Run \`npm run schema:compose\` and commit it.`);
    failed = true;
  }

  const ref = baseRef();
  const baseline = ref ? git("show", `${ref}:${SUPERGRAPH}`) : undefined;
  if (!baseline) {
    console.warn(`no ${SUPERGRAPH} at the base ref (${ref ?? "none"}): breaking-change check skipped`);
  } else {
    const before = apiSchemaOf(baseline);
    const after = apiSchemaOf(composed);
    const breaking = findBreakingChanges(before, after);
    for (const change of findDangerousChanges(before, after)) console.warn(`dangerous change: ${change.type}: ${change.description}`);
    const allowed = process.argv.includes("--allow-breaking") || process.env.SCHEMA_ALLOW_BREAKING === "1";
    for (const change of breaking) {
      console.error(`${allowed ? "allowed " : ""}breaking change against ${ref!.slice(0, 12)}: ${change.type}: ${change.description}`);
    }
    if (breaking.length > 0 && !allowed) {
      console.error("Breaking changes go through @deprecated first; pass --allow-breaking to override deliberately.");
      failed = true;
    }
  }
  if (failed) process.exit(1);
  console.log(`schema check passed: ${SUBGRAPHS.length} subgraphs compose, ${SUPERGRAPH} is current, no breaking change against ${ref?.slice(0, 12) ?? "nothing"}`);
}

const command = process.argv[2];
if (command === "compose") {
  writeFileSync(SUPERGRAPH, compose());
  console.log(`wrote ${SUPERGRAPH}`);
} else if (command === "check") {
  check();
} else {
  console.error("usage: tsx scripts/schema.ts compose | check [--base=<git ref>] [--allow-breaking]");
  process.exit(2);
}
