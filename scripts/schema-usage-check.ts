// The usage-aware part of `npm run schema:check` (scripts/schema.ts): with SCHEMA_USAGE_URL set, a
// breaking change is refused when anything it breaks was used in the last SCHEMA_USAGE_DAYS days
// (deprecated or not), naming the operations, and passes when nothing used it. Without a usage
// database the git-only rules hold (undefined here).
import type { BreakingChange } from "graphql";
import type { Config } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { checkAgainstUsage, operationsNamed } from "./schema-usage.ts";

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
