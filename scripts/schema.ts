// Schema registry tooling, run from scripts (never by introspection in production):
//   compose  — composes every subgraph's SDL file into the committed supergraph.graphql
//   check    — fails on a composition error, a stale supergraph.graphql, an undescribed type,
//              field, argument, enum value or input field of the API schema, a list of objects
//              without a size (@listSize, scripts/schema-list-sizes.ts), or a breaking change
//              against the supergraph of the base git ref (default: on main, the previous
//              commit; elsewhere, the merge-base with main). Removing what the base already
//              deprecated is the documented path and passes; `--allow-breaking` (or
//              SCHEMA_ALLOW_BREAKING=1) lets any other deliberate break through. With a usage
//              database (SCHEMA_USAGE_URL) usage decides instead: a break of anything used in the
//              last SCHEMA_USAGE_DAYS is refused naming the operations, one nothing used passes.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import {
  BreakingChangeType,
  findBreakingChanges,
  findDangerousChanges,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  type BreakingChange,
  type GraphQLSchema,
} from "graphql";
import { loadConfig } from "../core/config.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { COMPOSED_SERVICES, composeSupergraph } from "./supergraph.ts";
import { undescribedElements } from "./schema-descriptions.ts";
import { listSizeFindings } from "./schema-list-sizes.ts";

const SUPERGRAPH = "supergraph.graphql";
const config = loadConfig(["tooling"]);

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

/**
 * What to compare against: `--base=` / SCHEMA_BASE_REF; else, on main itself (the branch is main, or
 * HEAD is main's commit, as in CI after a push), the previous commit (HEAD~1); else the merge-base
 * with main. The merge-base of main with itself is HEAD, which would compare a commit with itself.
 */
function baseRef(): string | undefined {
  const explicit = process.argv.find((arg) => arg.startsWith("--base="))?.slice("--base=".length) ?? config.SCHEMA_BASE_REF;
  if (explicit) return explicit;
  const head = git("rev-parse", "--verify", "--quiet", "HEAD");
  const main = git("rev-parse", "--verify", "--quiet", "main^{commit}") ?? git("rev-parse", "--verify", "--quiet", "origin/main^{commit}");
  const onMain = git("rev-parse", "--abbrev-ref", "HEAD") === "main" || (head !== undefined && head === main);
  if (onMain || !main) return git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}");
  return git("merge-base", "HEAD", main);
}

/**
 * Breaking changes the contract allows without --allow-breaking: the removal of a field, input
 * field, argument or enum value the base already marked @deprecated (docs/reference/versioning.md).
 */
function deprecatedRemoval(before: GraphQLSchema, change: BreakingChange): boolean {
  if (change.type === BreakingChangeType.FIELD_REMOVED) {
    const [, typeName, fieldName] = /^([_A-Za-z][_0-9A-Za-z]*)\.([_A-Za-z][_0-9A-Za-z]*) was removed\.$/.exec(change.description) ?? [];
    const type = typeName ? before.getType(typeName) : undefined;
    if (!fieldName || !(isObjectType(type) || isInterfaceType(type) || isInputObjectType(type))) return false;
    return Boolean(type.getFields()[fieldName]?.deprecationReason);
  }
  if (change.type === BreakingChangeType.ARG_REMOVED) {
    const [, typeName, fieldName, argName] =
      /^([_A-Za-z][_0-9A-Za-z]*)\.([_A-Za-z][_0-9A-Za-z]*) arg ([_A-Za-z][_0-9A-Za-z]*) was removed\.$/.exec(change.description) ?? [];
    const type = typeName ? before.getType(typeName) : undefined;
    if (!fieldName || !(isObjectType(type) || isInterfaceType(type))) return false;
    return Boolean(type.getFields()[fieldName]?.args.find((arg) => arg.name === argName)?.deprecationReason);
  }
  if (change.type === BreakingChangeType.VALUE_REMOVED_FROM_ENUM) {
    const [, valueName, typeName] = /^([_A-Za-z][_0-9A-Za-z]*) was removed from enum type ([_A-Za-z][_0-9A-Za-z]*)\.$/.exec(change.description) ?? [];
    const type = typeName ? before.getType(typeName) : undefined;
    return isEnumType(type) && Boolean(type.getValue(valueName ?? "")?.deprecationReason);
  }
  return false;
}

async function check(): Promise<void> {
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

  const undescribed = undescribedElements(apiSchemaOf(composed));
  for (const element of undescribed) console.error(`undescribed: ${element} has no description in its subgraph's SDL`);
  if (undescribed.length > 0) {
    console.error("Every type, field, argument, enum value and input field clients see carries a description (docs/guides/adding-a-field.md).");
    failed = true;
  }

  const unsized = listSizeFindings(composed);
  for (const finding of unsized) console.error(finding);
  if (unsized.length > 0) failed = true;

  const ref = baseRef();
  const baseline = ref ? git("show", `${ref}:${SUPERGRAPH}`) : undefined;
  if (!baseline) {
    console.warn(`no ${SUPERGRAPH} at the base ref (${ref ?? "none"}): breaking-change check skipped`);
  } else {
    const before = apiSchemaOf(baseline);
    const after = apiSchemaOf(composed);
    const changes = findBreakingChanges(before, after);
    for (const change of findDangerousChanges(before, after)) console.warn(`dangerous change: ${change.type}: ${change.description}`);
    // With a usage database (SCHEMA_USAGE_URL) usage decides instead of deprecation (scripts/schema-usage-check.ts).
    // Loaded only then: it opens a database, which the git-only check never needs.
    const usageAware = config.SCHEMA_USAGE_URL ? (await import("./schema-usage-check.ts")).usageAwareBreakingChanges : undefined;
    const breaking =
      (await usageAware?.(config, changes, (change) => deprecatedRemoval(before, change))) ?? changes.filter((change) => !deprecatedRemoval(before, change));
    for (const change of config.SCHEMA_USAGE_URL ? [] : changes.filter((c) => !breaking.includes(c))) {
      console.log(`removal of a deprecated element against ${ref!.slice(0, 12)}: ${change.type}: ${change.description}`);
    }
    const allowed = process.argv.includes("--allow-breaking") || config.SCHEMA_ALLOW_BREAKING;
    for (const change of breaking) {
      console.error(`${allowed ? "allowed " : ""}breaking change against ${ref!.slice(0, 12)}: ${change.type}: ${change.description}`);
    }
    if (breaking.length > 0 && !allowed) {
      console.error("Breaking changes go through @deprecated first; pass --allow-breaking to override deliberately.");
      failed = true;
    }
  }
  if (failed) process.exit(1);
  console.log(
    `schema check passed: ${COMPOSED_SERVICES.length} subgraphs compose, ${SUPERGRAPH} is current, every element is described, every list has a size, no breaking change against ${ref?.slice(0, 12) ?? "nothing"}`,
  );
}

const command = process.argv[2];
if (command === "compose") {
  writeFileSync(SUPERGRAPH, compose());
  console.log(`wrote ${SUPERGRAPH}`);
} else if (command === "check") {
  await check();
} else {
  console.error("usage: tsx scripts/schema.ts compose | check [--base=<git ref>] [--allow-breaking]");
  process.exit(2);
}
