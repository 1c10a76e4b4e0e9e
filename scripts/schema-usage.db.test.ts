import { readFileSync } from "node:fs";
import { findBreakingChanges, GraphQLObjectType, GraphQLSchema, parse, type GraphQLFieldConfig } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { createUsageRecorder, OTHER_OPERATION, usageOf, type UsageRecorder } from "../gateway/schema-usage.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { checkAgainstUsage } from "./schema-usage.ts";

// Usage-aware schema checks against a usage store with traffic recorded by a real gateway
// (gateway/schema-usage.ts into the test database): removing a field nothing used passes, even
// undeprecated; removing a deprecated one that operations use fails, naming them.

const committed = apiSchemaOf(readFileSync("supergraph.graphql", "utf8"));

/** The schema with one Query field removed, or deprecated. */
function changeQueryField(schema: GraphQLSchema, field: string, change: "remove" | "deprecate"): GraphQLSchema {
  const config = schema.toConfig();
  const query = schema.getQueryType()!.toConfig();
  const fields: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
  for (const [name, value] of Object.entries(query.fields)) {
    if (name !== field) fields[name] = value;
    else if (change === "deprecate") fields[name] = { ...value, deprecationReason: "going away" };
  }
  const newQuery = new GraphQLObjectType({ ...query, fields });
  return new GraphQLSchema({ ...config, query: newQuery, types: config.types.filter((t) => t.name !== query.name) });
}

let db: TestDatabase;
let recorder: UsageRecorder;
let stack: RunningStack;
beforeAll(async () => {
  db = await createTestDatabase();
  recorder = createUsageRecorder({ db, logger: silentLogger(), flushMs: 3_600_000 });
  stack = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({ schemaUsage: recorder }),
  });
});
afterAll(async () => {
  await stack?.stop();
  await db?.close();
});

async function ask(query: string): Promise<void> {
  const response = await fetch(`${stack.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

describe("recorded usage", () => {
  it("strips literals: requests differing only in values are one operation", () => {
    const a = usageOf(committed, parse(`query P { pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`), "P");
    const b = usageOf(committed, parse(`query P {  pendingBetCount(wallet: "0x000000000000000000000000000000000000beef") }`), "P");
    expect(a.hash).toBe(b.hash);
    expect(a.document).toBe('query P{pendingBetCount(wallet:"")}');
    expect(a.coordinates).toEqual(expect.arrayContaining(["Query.pendingBetCount", "Query.pendingBetCount(wallet:)"]));
  });

  it("schema:check with usage: a used deprecated field's removal fails naming the operations; an unused field's removal passes", async () => {
    for (const wallet of ["dead", "beef", "cafe"])
      await ask(`query PendingCount { pendingBetCount(wallet: "0x000000000000000000000000000000000000${wallet}") }`);
    await ask(`query Settings { networkConfigs { chainId name } }`);
    await recorder.flush();

    const counted = await db.prisma.schemaUsageHourly.findMany({ where: { coordinate: "Query.pendingBetCount" } });
    expect(counted.map((row) => row.count)).toEqual([3n]);

    // Used and deprecated: git alone would let its removal through; usage refuses it, naming PendingCount.
    const deprecated = changeQueryField(committed, "pendingBetCount", "deprecate");
    const usedRemoval = findBreakingChanges(deprecated, changeQueryField(committed, "pendingBetCount", "remove"));
    expect(usedRemoval.map((c) => c.description)).toEqual(["Query.pendingBetCount was removed."]);
    const used = await checkAgainstUsage({ db, days: 30, changes: usedRemoval, gitOnlyAllows: () => true });
    expect(used.allowed).toEqual([]);
    expect(used.refused).toHaveLength(1);
    expect(used.refused[0]!.usage[0]!.operations).toEqual([{ name: "PendingCount", hash: expect.stringMatching(/^[0-9a-f]{64}$/), requests: 3n }]);

    // Unused and not deprecated: git alone would refuse it; nothing used it, so it passes.
    const unusedRemoval = findBreakingChanges(committed, changeQueryField(committed, "fairnessStats", "remove"));
    expect(unusedRemoval.map((c) => c.description)).toEqual(["Query.fairnessStats was removed."]);
    const unused = await checkAgainstUsage({ db, days: 30, changes: unusedRemoval, gitOnlyAllows: () => false });
    expect(unused.refused).toEqual([]);
    expect(unused.allowed.map((a) => a.why)).toEqual(["unused in the last 30 days"]);

    // Outside the window nothing counts.
    const later = await checkAgainstUsage({ db, days: 30, changes: usedRemoval, gitOnlyAllows: () => false, now: new Date(Date.now() + 40 * 86_400_000) });
    expect(later.refused).toEqual([]);
  });

  it("bounds distinct operations: past the bound they count as one operation, other, with every coordinate they use", async () => {
    const bounded = createUsageRecorder({ db, logger: silentLogger(), flushMs: 3_600_000, maxOperations: 1 });
    try {
      bounded.count(usageOf(committed, parse(`query A { networkConfigs { chainId } }`), "A"));
      bounded.count(usageOf(committed, parse(`query B { betResult(chainId: 1, betId: "1") { betId } }`), "B"));
      bounded.count(usageOf(committed, parse(`query C { fairnessStats(chainId: 1) { settledBets } }`), "C"));
      await bounded.flush();
      const other = await db.prisma.schemaUsageHourly.findMany({ where: { operationHash: OTHER_OPERATION }, orderBy: { coordinate: "asc" } });
      expect(other.map((row) => row.coordinate)).toEqual(expect.arrayContaining(["Query.betResult", "Query.fairnessStats"]));
      expect(new Set(other.map((row) => row.count))).toEqual(new Set([2n]));
      expect(await db.prisma.schemaUsageOperation.findUnique({ where: { hash: OTHER_OPERATION } })).toMatchObject({ name: OTHER_OPERATION });
    } finally {
      await bounded.stop();
    }
  });
});
