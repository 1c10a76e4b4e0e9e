import dotenv from "dotenv";
import type { z } from "zod";
import { CONFIG_VARIABLES } from "./config-variables.ts";
import type { ConfigSection, Variable } from "./config-types.ts";

// The one parser of the variables declared in core/config-variables.ts (kept apart for its size).
export { CONFIG_VARIABLES } from "./config-variables.ts";
export { CONFIG_SECTIONS, type ConfigSection, type Variable } from "./config-types.ts";

type Variables = typeof CONFIG_VARIABLES;
export type VariableName = keyof Variables;

/** The names of the variables of the given sections. */
type NamesOf<TSection extends ConfigSection> = { [Name in VariableName]: Variables[Name]["section"] extends TSection ? Name : never }[VariableName];

/** The parsed variables of the given sections. */
export type Config<TSection extends ConfigSection = ConfigSection> = { [Name in NamesOf<TSection>]: z.output<Variables[Name]["type"]> };

export class ConfigError extends Error {
  override name = "ConfigError";
}

let dotenvLoaded = false;

/** The process environment, with `.env` (when present) loaded once under it: a set variable always wins. */
function processEnvironment(): Record<string, string | undefined> {
  if (!dotenvLoaded) {
    dotenv.config({ quiet: true });
    dotenvLoaded = true;
  }
  return process.env;
}

/** Benchmark-only settings that production configuration refuses (read from the raw NODE_ENV, whichever sections were asked for). */
const BENCHMARK_ONLY: readonly VariableName[] = ["INDEXER_BENCH_SKIP_PROOF_VERIFICATION"];

function productionRefusals(source: Record<string, string | undefined>, parsed: Record<string, unknown>): string[] {
  if (source.NODE_ENV !== "production") return [];
  return BENCHMARK_ONLY.filter((name) => parsed[name] === true).map((name) => `  ${name}: benchmarks only, refused with NODE_ENV=production`);
}

/**
 * Validates the variables of `sections` in `env` (default: the process environment and `.env`),
 * listing every problem at once (ConfigError). An unset or empty variable takes its default (empty
 * is how `.env.example` writes a variable without one).
 */
export function loadConfig<TSection extends ConfigSection>(sections: readonly TSection[], env?: Record<string, string | undefined>): Config<TSection> {
  const source = env ?? processEnvironment();
  const wanted = new Set<ConfigSection>(sections);
  const parsed: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES) as [string, Variable][]) {
    if (!wanted.has(spec.section)) continue;
    const raw = source[name];
    const result = spec.type.safeParse(raw === undefined || raw === "" ? spec.default : raw);
    if (result.success) parsed[name] = result.data;
    else problems.push(...result.error.issues.map((issue) => `  ${name}: ${issue.message}`));
  }
  problems.push(...productionRefusals(source, parsed));
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n${problems.join("\n")}`);
  return parsed as Config<TSection>;
}
