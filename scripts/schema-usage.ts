// Recorded schema usage (gateway/schema-usage.ts), for tooling:
//   `npm run schema:usage [-- --days=N | --since=<ISO date> [--until=<ISO date>]] [--coordinate=Type.field]`
//   reports, per schema coordinate, the requests and the operations that used it over a period
//   (default the last SCHEMA_USAGE_DAYS days) from SCHEMA_USAGE_URL;
// and `checkAgainstUsage`, the usage-aware rule of `npm run schema:check`: a breaking change to
// anything used in the window is refused, deprecated or not, naming the operations; a change to
// what nothing used passes; a change that names no coordinate keeps the git-only rule; and
// `trafficBetween`, the operations recorded in a period with their requests (`npm run schema:impact`).
import { pathToFileURL } from "node:url";
import { BreakingChangeType, type BreakingChange } from "graphql";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";

const NAME = "[_A-Za-z][_0-9A-Za-z]*";

/** The schema coordinates a breaking change breaks for an operation that uses them; empty: none is known. */
export function coordinatesOf(change: BreakingChange): string[] {
  const match = (pattern: string) => new RegExp(`^${pattern}$`).exec(change.description);
  switch (change.type) {
    case BreakingChangeType.FIELD_REMOVED:
    case BreakingChangeType.FIELD_CHANGED_KIND: {
      const m = match(`(${NAME})\\.(${NAME}) (?:was removed|changed type from .*)\\.`);
      return m ? [`${m[1]}.${m[2]}`] : [];
    }
    case BreakingChangeType.ARG_REMOVED:
    case BreakingChangeType.ARG_CHANGED_KIND: {
      const m = match(`(${NAME})\\.(${NAME}) arg (${NAME}) (?:was removed|has changed type from .*)\\.`);
      return m ? [`${m[1]}.${m[2]}(${m[3]}:)`] : [];
    }
    case BreakingChangeType.REQUIRED_ARG_ADDED: {
      const m = match(`A required arg ${NAME} on (${NAME})\\.(${NAME}) was added\\.`);
      return m ? [`${m[1]}.${m[2]}`] : [];
    }
    case BreakingChangeType.VALUE_REMOVED_FROM_ENUM: {
      const m = match(`(${NAME}) was removed from enum type (${NAME})\\.`);
      return m ? [`${m[2]}.${m[1]}`] : [];
    }
    case BreakingChangeType.TYPE_REMOVED:
    case BreakingChangeType.TYPE_CHANGED_KIND: {
      const m = match(`(${NAME}) (?:was removed|changed from .*)\\.`);
      return m ? [m[1]!] : [];
    }
    case BreakingChangeType.REQUIRED_INPUT_FIELD_ADDED: {
      const m = match(`A required field ${NAME} on input type (${NAME}) was added\\.`);
      return m ? [m[1]!] : [];
    }
    case BreakingChangeType.TYPE_REMOVED_FROM_UNION: {
      const m = match(`(${NAME}) was removed from union type (${NAME})\\.`);
      return m ? [m[1]!, m[2]!] : [];
    }
    default:
      return [];
  }
}

export interface CoordinateUsage {
  coordinate: string;
  requests: bigint;
  operations: { name: string; hash: string; requests: bigint }[];
}

/** Usage of each coordinate (all of them, or only `coordinates`) over [since, until). */
export async function usageBetween(db: Database, since: Date, until: Date, coordinates?: readonly string[]): Promise<CoordinateUsage[]> {
  const rows = await db.prisma.$queryRawUnsafe<{ coordinate: string; hash: string; name: string | null; requests: bigint }[]>(
    `SELECT u."coordinate", u."operationHash" AS hash, o."name", SUM(u."count")::bigint AS requests
       FROM "SchemaUsageHourly" u LEFT JOIN "SchemaUsageOperation" o ON o."hash" = u."operationHash"
      WHERE u."hour" >= $1::timestamp AND u."hour" < $2::timestamp AND ($3::text[] IS NULL OR u."coordinate" = ANY($3::text[]))
      GROUP BY u."coordinate", u."operationHash", o."name"
      ORDER BY u."coordinate", requests DESC, hash`,
    since.toISOString(),
    until.toISOString(),
    coordinates ? [...coordinates] : null,
  );
  const byCoordinate = new Map<string, CoordinateUsage>();
  for (const row of rows) {
    let usage = byCoordinate.get(row.coordinate);
    if (!usage) {
      usage = { coordinate: row.coordinate, requests: 0n, operations: [] };
      byCoordinate.set(row.coordinate, usage);
    }
    const requests = BigInt(row.requests);
    usage.requests += requests;
    usage.operations.push({ name: row.name ?? "(anonymous)", hash: row.hash, requests });
  }
  return [...byCoordinate.values()];
}

/** An operation recorded in a period: its literal-free document and how many requests it served. */
export interface RecordedTraffic {
  hash: string;
  name: string | null;
  /** The normalised document, literals stripped; empty for `other` (operations past the bound). */
  document: string;
  requests: bigint;
}

/**
 * The operations recorded over [since, until), most requested first. Every request of an operation
 * counts once on each coordinate it uses, so its requests are its most counted coordinate's.
 */
export async function trafficBetween(db: Database, since: Date, until: Date): Promise<RecordedTraffic[]> {
  const rows = await db.prisma.$queryRawUnsafe<{ hash: string; name: string | null; document: string | null; requests: bigint }[]>(
    `SELECT per."operationHash" AS hash, o."name", o."document", MAX(per.requests)::bigint AS requests
       FROM (SELECT "operationHash", "coordinate", SUM("count") AS requests FROM "SchemaUsageHourly"
              WHERE "hour" >= $1::timestamp AND "hour" < $2::timestamp GROUP BY "operationHash", "coordinate") per
       LEFT JOIN "SchemaUsageOperation" o ON o."hash" = per."operationHash"
      GROUP BY per."operationHash", o."name", o."document"
      ORDER BY requests DESC, hash`,
    since.toISOString(),
    until.toISOString(),
  );
  return rows.map((row) => ({ hash: row.hash, name: row.name, document: row.document ?? "", requests: BigInt(row.requests) }));
}

export interface UsageVerdict {
  /** Breaking changes to something used in the window, with the operations that used it. */
  refused: { change: BreakingChange; usage: CoordinateUsage[] }[];
  /** Breaking changes that pass: nothing used what they break, or (no coordinate) the git-only rule let them through. */
  allowed: { change: BreakingChange; why: string }[];
}

/**
 * The usage-aware rule of `schema:check`. `gitOnlyAllows` is today's rule (the removal of what the
 * base deprecated), kept for a change that names no coordinate (e.g. a directive's).
 */
export async function checkAgainstUsage(options: {
  db: Database;
  days: number;
  changes: readonly BreakingChange[];
  gitOnlyAllows: (change: BreakingChange) => boolean;
  now?: Date;
}): Promise<UsageVerdict> {
  const until = options.now ?? new Date();
  const since = new Date(until.getTime() - options.days * 86_400_000);
  const wanted = options.changes.flatMap(coordinatesOf);
  // Usage counted up to the end of the current hour: the recorder writes whole hours.
  const used = new Map((await usageBetween(options.db, since, new Date(until.getTime() + 3_600_000), wanted)).map((u) => [u.coordinate, u]));
  const verdict: UsageVerdict = { refused: [], allowed: [] };
  for (const change of options.changes) {
    const coordinates = coordinatesOf(change);
    if (coordinates.length === 0) {
      if (options.gitOnlyAllows(change))
        verdict.allowed.push({ change, why: "the removal of a deprecated element (no usage recorded for this kind of change)" });
      else verdict.refused.push({ change, usage: [] });
      continue;
    }
    const usage = coordinates.flatMap((c) => used.get(c) ?? []);
    if (usage.length > 0) verdict.refused.push({ change, usage });
    else verdict.allowed.push({ change, why: `unused in the last ${options.days} days` });
  }
  return verdict;
}

/** "PlayerBets (120 requests), other (3 requests)": the operations of a coordinate's usage, most used first. */
export function operationsNamed(usage: readonly CoordinateUsage[], max = 10): string {
  const operations = usage.flatMap((u) => u.operations).sort((a, b) => (b.requests > a.requests ? 1 : b.requests < a.requests ? -1 : 0));
  const shown = operations.slice(0, max).map((o) => `${o.name} ${o.hash.slice(0, 12)} (${o.requests} requests)`);
  return operations.length > max ? `${shown.join(", ")} and ${operations.length - max} more` : shown.join(", ");
}

async function report(): Promise<void> {
  const config = loadConfig(["tooling"]);
  if (!config.SCHEMA_USAGE_URL) {
    console.error("SCHEMA_USAGE_URL is not set: the database the gateways record usage into (SCHEMA_USAGE_DATABASE_URL)");
    process.exit(2);
  }
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const until = arg("until") ? new Date(arg("until")!) : new Date();
  const days = Number(arg("days") ?? config.SCHEMA_USAGE_DAYS);
  const since = arg("since") ? new Date(arg("since")!) : new Date(until.getTime() - days * 86_400_000);
  if (Number.isNaN(since.getTime()) || Number.isNaN(until.getTime()) || !(days > 0)) {
    console.error("usage: npm run schema:usage -- [--days=N | --since=<ISO date> [--until=<ISO date>]] [--coordinate=Type.field]");
    process.exit(2);
  }
  const coordinate = arg("coordinate");
  const db = await openDatabase({ url: config.SCHEMA_USAGE_URL, poolSize: 1, applicationName: "schema-usage-report" });
  try {
    const usage = await usageBetween(db, since, until, coordinate ? [coordinate] : undefined);
    console.log(`schema usage from ${since.toISOString()} to ${until.toISOString()}: ${usage.length} coordinates used`);
    for (const u of usage) console.log(`${u.coordinate}\t${u.requests} requests\t${operationsNamed([u], 5)}`);
  } finally {
    await db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await report();
