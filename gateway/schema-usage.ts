import { createHash } from "node:crypto";
import type { ApolloServerPlugin, BaseContext, GraphQLRequestListener } from "@apollo/server";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  Kind,
  print,
  stripIgnoredCharacters,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLSchema,
} from "graphql";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";

// Schema usage, for usage-aware schema checks (docs/reference/versioning.md): which schema
// coordinates — `Type`, `Type.field`, `Type.field(arg:)`, `Enum.VALUE`, `Input.field` — each
// operation uses, counted per hour. An operation is its normalised document with every literal
// stripped (numbers 0, strings "", lists [], objects {}), by SHA-256: two requests differing only
// in their arguments' values are one operation. On the request path only a map lookup and an
// increment: a document's usage is worked out once per (schema, parsed document), and the counts
// are written to the database every `flushMs`, in the background, under a role granted only the
// usage tables. Distinct operations are bounded per flush (`maxOperations`); the rest are counted
// as one operation, `other`, with the union of their coordinates, so a check still sees them.
// Enum values passed in variables are not seen (only the variable's type is): documented.

export const OTHER_OPERATION = "other";

export interface OperationUsage {
  hash: string;
  name: string | null;
  document: string;
  coordinates: readonly string[];
}

/** Every literal replaced by an empty one of its kind: the values of a request are not its operation. */
const withoutLiterals: ASTVisitor = {
  IntValue: { enter: (node) => ({ ...node, value: "0" }) },
  FloatValue: { enter: (node) => ({ ...node, kind: Kind.INT, value: "0" }) },
  StringValue: { enter: (node) => ({ ...node, value: "", block: false }) },
  ListValue: { enter: (node) => ({ ...node, values: [] }) },
  ObjectValue: { enter: (node) => ({ ...node, fields: [] }) },
};

/** The coordinates a document uses in `schema`, and its literal-free signature. */
export function usageOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): OperationUsage {
  const coordinates = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (!parent || !field || field.name.startsWith("__")) return;
        coordinates.add(`${parent.name}.${field.name}`);
        coordinates.add(getNamedType(field.type).name);
      },
      Argument() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        const argument = typeInfo.getArgument();
        if (!parent || !field || !argument || field.name.startsWith("__")) return;
        coordinates.add(`${parent.name}.${field.name}(${argument.name}:)`);
        coordinates.add(getNamedType(argument.type).name);
      },
      ObjectField(node) {
        const parent = getNamedType(typeInfo.getParentInputType() ?? undefined);
        if (isInputObjectType(parent)) coordinates.add(`${parent.name}.${node.name.value}`);
        const type = getNamedType(typeInfo.getInputType() ?? undefined);
        if (type) coordinates.add(type.name);
      },
      EnumValue(node) {
        const type = getNamedType(typeInfo.getInputType() ?? undefined);
        if (isEnumType(type)) coordinates.add(`${type.name}.${node.value}`);
      },
      VariableDefinition() {
        const type = getNamedType(typeInfo.getInputType() ?? undefined);
        if (type) coordinates.add(type.name);
      },
    }),
  );
  const stripped = visit(document, withoutLiterals);
  const signature = stripIgnoredCharacters(print(stripped));
  return { hash: createHash("sha256").update(signature).digest("hex"), name: operationName, document: signature, coordinates: [...coordinates].sort() };
}

interface Counted {
  usage: OperationUsage;
  count: number;
}

export interface UsageRecorderOptions {
  /** The database of the usage tables, opened with the usage role (SCHEMA_USAGE_DATABASE_URL). */
  db: Database;
  logger: Logger;
  /** How often counts are written; default 60 s. */
  flushMs?: number;
  /** Distinct operations counted per flush before the rest count as `other`; default 1 000. */
  maxOperations?: number;
  /** Hourly rows older than this many days are deleted (once an hour); default 90. */
  retentionDays?: number;
  now?: () => number;
}

export interface UsageRecorder {
  plugin: ApolloServerPlugin;
  /** Counts one request of `usage` (the plugin's path; exposed for tests and benchmarks). */
  count(usage: OperationUsage): void;
  /** Writes what is counted now (and waits for it). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

const HOUR_MS = 3_600_000;

export function createUsageRecorder(options: UsageRecorderOptions): UsageRecorder {
  const now = options.now ?? Date.now;
  const maxOperations = options.maxOperations ?? 1_000;
  const retentionMs = (options.retentionDays ?? 90) * 24 * HOUR_MS;
  /** Counts by hour (ms since the epoch), then by operation hash. */
  let pending = new Map<number, Map<string, Counted>>();
  let distinct = 0;
  let failing = false;
  let lastPrune = 0;
  let writing: Promise<void> = Promise.resolve();
  const byDocument = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, OperationUsage>>();

  const count = (usage: OperationUsage) => {
    const hour = Math.floor(now() / HOUR_MS) * HOUR_MS;
    let counts = pending.get(hour);
    if (!counts) {
      counts = new Map();
      pending.set(hour, counts);
    }
    const known = counts.get(usage.hash);
    if (known) {
      known.count++;
      return;
    }
    if (distinct < maxOperations) {
      distinct++;
      counts.set(usage.hash, { usage, count: 1 });
      return;
    }
    const other = counts.get(OTHER_OPERATION);
    if (!other) {
      counts.set(OTHER_OPERATION, { usage: { hash: OTHER_OPERATION, name: OTHER_OPERATION, document: "", coordinates: usage.coordinates }, count: 1 });
      return;
    }
    other.count++;
    if (usage.coordinates.some((c) => !other.usage.coordinates.includes(c))) {
      other.usage = { ...other.usage, coordinates: [...new Set([...other.usage.coordinates, ...usage.coordinates])].sort() };
    }
  };

  const write = async (batch: Map<number, Map<string, Counted>>) => {
    const operations: Counted[] = [];
    const hours: string[] = [];
    const coordinates: string[] = [];
    const hashes: string[] = [];
    const counts: string[] = [];
    for (const [hour, byHash] of batch) {
      for (const counted of byHash.values()) {
        operations.push(counted);
        for (const coordinate of counted.usage.coordinates) {
          hours.push(new Date(hour).toISOString());
          coordinates.push(coordinate);
          hashes.push(counted.usage.hash);
          counts.push(String(counted.count));
        }
      }
    }
    if (operations.length === 0) return;
    const prisma = options.db.prisma;
    await prisma.$executeRawUnsafe(
      `INSERT INTO "SchemaUsageOperation" ("hash", "name", "document", "firstSeen", "lastSeen")
       SELECT o.hash, o.name, o.document, now(), now() FROM unnest($1::text[], $2::text[], $3::text[]) AS o(hash, name, document)
       ON CONFLICT ("hash") DO UPDATE SET "lastSeen" = now(), "name" = COALESCE(EXCLUDED."name", "SchemaUsageOperation"."name")`,
      operations.map((o) => o.usage.hash),
      operations.map((o) => o.usage.name),
      operations.map((o) => o.usage.document),
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO "SchemaUsageHourly" ("hour", "coordinate", "operationHash", "count")
       SELECT u.hour, u.coordinate, u.hash, u.count FROM unnest($1::timestamp[], $2::text[], $3::text[], $4::bigint[]) AS u(hour, coordinate, hash, count)
       ON CONFLICT ("hour", "coordinate", "operationHash") DO UPDATE SET "count" = "SchemaUsageHourly"."count" + EXCLUDED."count"`,
      hours,
      coordinates,
      hashes,
      counts,
    );
    if (now() - lastPrune >= HOUR_MS) {
      lastPrune = now();
      const before = new Date(now() - retentionMs);
      await prisma.$executeRawUnsafe(`DELETE FROM "SchemaUsageHourly" WHERE "hour" < $1::timestamp`, before.toISOString());
      await prisma.$executeRawUnsafe(`DELETE FROM "SchemaUsageOperation" WHERE "lastSeen" < $1::timestamp`, before.toISOString());
    }
  };

  const flush = () => {
    const batch = pending;
    pending = new Map();
    distinct = 0;
    writing = writing.then(() =>
      write(batch).then(
        () => {
          if (failing) options.logger.info("schema usage: recording again");
          failing = false;
        },
        (error: unknown) => {
          // Dropped, not retried: memory stays bounded while the database is away; the gap is logged.
          if (!failing)
            options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "schema usage: cannot write; dropping counts until it can");
          failing = true;
        },
      ),
    );
    return writing;
  };

  const timer = setInterval(() => void flush(), options.flushMs ?? 60_000);
  timer.unref();

  // One listener for every request (no per-request closure): the whole per-request cost is a
  // WeakMap lookup and an increment once the document's usage is known.
  const listener: GraphQLRequestListener<BaseContext> = {
    async didResolveOperation({ schema, document, operationName }) {
      let documents = byDocument.get(schema);
      if (!documents) {
        documents = new WeakMap();
        byDocument.set(schema, documents);
      }
      let usage = documents.get(document);
      if (!usage) {
        usage = usageOf(schema, document, operationName ?? null);
        documents.set(document, usage);
      }
      count(usage);
    },
  };
  const plugin: ApolloServerPlugin = { requestDidStart: () => Promise.resolve(listener) };

  return {
    plugin,
    count,
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
