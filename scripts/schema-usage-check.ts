// The usage-aware part of `npm run schema:check` (scripts/schema.ts): with SCHEMA_USAGE_URL set, a
// breaking change is refused when anything it breaks was used in the last SCHEMA_USAGE_DAYS days
// (deprecated or not), naming the operations, and passes when nothing used it. Without a usage
// database the git-only rules hold (undefined here). And the same rule, with the recorded operations'
// plans, for `npm run schema:impact` (impactOnRecordedTraffic).
import { validate, type BreakingChange } from "graphql";
import type { Config } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { pricedApiSchemaOf } from "../gateway/cost-directives.ts";
import { OTHER_OPERATION } from "../gateway/schema-usage.ts";
import {
  breakingChanges,
  operationImpacts,
  recordedOperations,
  withVariablesForLiterals,
  type OperationImpact,
  type RecordedOperation,
} from "./plan-impact.ts";
import { checkAgainstUsage, operationsNamed, trafficBetween, type RecordedTraffic } from "./schema-usage.ts";

/** The breaking changes to refuse by recorded usage, each printed with its reason; undefined without a usage database. */
export async function usageAwareBreakingChanges(
  config: Config<"tooling">,
  changes: readonly BreakingChange[],
  gitOnlyAllows: (change: BreakingChange) => boolean,
): Promise<BreakingChange[] | undefined> {
  if (!config.SCHEMA_USAGE_URL) return undefined;
  if (changes.length === 0) return [];
  const db = await openDatabase({ url: config.SCHEMA_USAGE_URL, poolSize: 1, applicationName: "schema-check" });
  try {
    const verdict = await checkAgainstUsage({ db, days: config.SCHEMA_USAGE_DAYS, changes, gitOnlyAllows });
    for (const { change, why } of verdict.allowed) console.log(`passes (${why}): ${change.type}: ${change.description}`);
    for (const { change, usage } of verdict.refused) {
      if (usage.length > 0)
        console.error(`used in the last ${config.SCHEMA_USAGE_DAYS} days by ${operationsNamed(usage)}: ${change.type}: ${change.description}`);
    }
    return verdict.refused.map(({ change }) => change);
  } finally {
    await db.close();
  }
}

/** A recorded operation's fate under a change, with the requests it served in the window. */
export interface TrafficImpact extends OperationImpact {
  hash: string;
  requests: bigint;
}

export interface RecordedTrafficImpact {
  /** Each recorded operation valid against `before`, planned, validated and priced on both, most requested first. */
  impacts: TrafficImpact[];
  /** Operations not planned: `other` (past the recorder's bound) and documents `before` no longer validates. */
  unplanned: { name: string; requests: bigint; why: string }[];
  /** The usage rule's findings: a breaking change to something used, naming the operations; one naming no coordinate. */
  findings: string[];
  /** Breaking changes the usage rule lets through, with why. */
  passes: string[];
}

/**
 * `npm run schema:impact` against the usage store: the operations recorded in the last `days` days
 * (their literal-free documents, each literal argument made a variable so it plans) planned on the
 * supergraph `before` and `after`, and the usage rule of schema:check on the change's breaks.
 */
export async function impactOnRecordedTraffic(options: {
  db: Database;
  days: number;
  before: string;
  after: string;
  now?: Date;
}): Promise<RecordedTrafficImpact> {
  const until = options.now ?? new Date();
  const since = new Date(until.getTime() - options.days * 86_400_000);
  // Up to the end of the current hour, as checkAgainstUsage: the recorder writes whole hours.
  const traffic = await trafficBetween(options.db, since, new Date(until.getTime() + 3_600_000));
  const api = pricedApiSchemaOf(options.before);
  const unplanned: RecordedTrafficImpact["unplanned"] = [];
  const planned: { operation: RecordedOperation; recorded: RecordedTraffic }[] = [];
  for (const recorded of traffic) {
    const name = `${recorded.name ?? "(anonymous)"} ${recorded.hash.slice(0, 12)}`;
    if (recorded.hash === OTHER_OPERATION || recorded.document === "") {
      unplanned.push({ name: OTHER_OPERATION, requests: recorded.requests, why: "operations past the recorder's bound, no document kept" });
      continue;
    }
    const operations = recordedOperations(recorded.document, "recorded.graphql");
    const operation = operations.find((o) => o.name === recorded.name) ?? operations[0];
    if (!operation) continue;
    const plannable = withVariablesForLiterals(api, { ...operation, name });
    const errors = validate(api, plannable.document);
    if (errors.length > 0) unplanned.push({ name, requests: recorded.requests, why: `not valid against the current supergraph: ${errors[0]!.message}` });
    else planned.push({ operation: plannable, recorded });
  }
  const impacts = operationImpacts(
    options.before,
    options.after,
    planned.map((p) => p.operation),
  ).map((impact, i) => ({ ...impact, hash: planned[i]!.recorded.hash, requests: planned[i]!.recorded.requests }));

  return { impacts, unplanned, ...(await usageRule({ ...options, now: until })) };
}

/**
 * The usage rule on the breaking changes from `before` to `after`: one to something used in the
 * window is a finding naming the operations, one nothing used passes, one naming no coordinate is a finding.
 */
export async function usageRule(options: {
  db: Database;
  days: number;
  before: string;
  after: string;
  now?: Date;
}): Promise<Pick<RecordedTrafficImpact, "findings" | "passes">> {
  const changes = breakingChanges(options.before, options.after);
  const verdict = await checkAgainstUsage({ db: options.db, days: options.days, changes, gitOnlyAllows: () => false, now: options.now });
  return {
    findings: verdict.refused.map(({ change, usage }) =>
      usage.length > 0
        ? `used in the last ${options.days} days by ${operationsNamed(usage)}: ${change.type}: ${change.description}`
        : `breaking change: ${change.type}: ${change.description}`,
    ),
    passes: verdict.allowed.map(({ change, why }) => `passes (${why}): ${change.type}: ${change.description}`),
  };
}
