import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createUsageRecorder, type UsageRecorder } from "../gateway/schema-usage.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { impactOnRecordedTraffic } from "./schema-usage-check.ts";
import { composeSupergraph } from "./supergraph.ts";

// One team, one loop (issue 25 item 4) against recorded usage: traffic recorded by a real gateway
// (gateway/schema-usage.ts into the test database), then a subgraph's SDL change planned against
// the operations recorded (literal-free documents), each named with its requests.

const CURRENT = readFileSync("supergraph.graphql", "utf8");

function edited(name: string, from: string, to: string): string {
  const text = readFileSync(`subgraphs/${name}/${name}.graphql`, "utf8");
  expect(text).toContain(from);
  return text.replace(from, to);
}

function compose(overrides: Record<string, string>): string {
  const result = composeSupergraph(overrides);
  if (result.errors) throw new Error(result.errors.join("\n"));
  return result.supergraphSdl;
}

/** The results SDL without Query.fairnessStats (its comment, description, arguments and directives). */
function withoutFairnessStats(): string {
  const text = readFileSync("subgraphs/results/results.graphql", "utf8");
  const start = text.indexOf("  # Its price (@cost 20)");
  const end = text.indexOf("): [GameStats!]! @cost(weight: 20) @listSize(assumedSize: 10)\n");
  expect([start, end].every((at) => at > 0)).toBe(true);
  return text.slice(0, start) + text.slice(text.indexOf("\n", end) + 1);
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
  for (const betId of ["5", "6"]) await ask(`query BetGame { betResult(chainId: 31337, betId: "${betId}") { game result { won } } }`);
  for (let i = 0; i < 3; i++) await ask(`query Heads { networkConfigs { name indexing { headBlock } } }`);
  await ask(`query Page { playerBets(wallet: "0x000000000000000000000000000000000000dead", first: 50) { nodes { betId } } }`);
  await recorder.flush();
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

describe("schema:impact against recorded usage", () => {
  it("recorded operations come from the usage store with their requests; their documents keep no literals", async () => {
    const recorded = await db.prisma.schemaUsageOperation.findMany({ where: { name: "BetGame" } });
    expect(recorded.map((o) => o.document)).toEqual(['query BetGame{betResult(chainId:0 betId:""){game result{won}}}']);
    const impact = await impactOnRecordedTraffic({ db, days: 30, before: CURRENT, after: CURRENT });
    expect(impact.unplanned).toEqual([]);
    expect(impact.impacts.map((i) => [i.name.split(" ")[0], i.verdict, i.requests])).toEqual([
      ["Heads", "unchanged", 3n],
      ["BetGame", "unchanged", 2n],
      ["Page", "unchanged", 1n],
    ]);
  });

  it("a repricing reaches recorded operations though their literals were stripped: a slicing argument prices at its default", async () => {
    // Page asked for 50 bets; its record says first:0, which would price no bet at all. As a variable,
    // left unset, first is its default, 20: a bet 1 point dearer makes Page 20 points dearer.
    const after = compose({
      history: edited("history", 'type Bet @key(fields: "chainId betId") @cost(weight: 3) {', 'type Bet @key(fields: "chainId betId") @cost(weight: 4) {'),
    });
    const impact = await impactOnRecordedTraffic({ db, days: 30, before: CURRENT, after });
    const page = impact.impacts.find((i) => i.name.startsWith("Page "));
    expect(page!.costAfter! - page!.costBefore).toBe(20);
  });

  it("a change that moves a recorded operation's plan names it with its requests, and only it", async () => {
    const after = compose({
      // Both SDL files import @shareable already (the wallet page's shared fields).
      history: edited(
        "history",
        '  "Game id as recorded by the contract."\n  game: String!',
        '  "Game id as recorded by the contract."\n  game: String! @shareable',
      ),
      results: edited(
        "results",
        "  result: BetResult @shareable\n",
        '  result: BetResult @shareable\n  "Game id as recorded by the contract."\n  game: String! @shareable\n',
      ),
    });
    const impact = await impactOnRecordedTraffic({ db, days: 30, before: CURRENT, after });
    expect(impact.impacts.filter((i) => i.verdict !== "unchanged").map((i) => [i.name.split(" ")[0], i.verdict, i.requests])).toEqual([
      ["BetGame", "plan", 2n],
    ]);
    expect(impact.findings).toEqual([]);
  });

  it("an unused change affects nothing: a new field, and the removal of a field nothing asked for, which the usage rule passes", async () => {
    const after = compose({
      history: edited(
        "history",
        "type Query {\n",
        'type Query {\n  "The newest bets, newest first."\n  recentBets("How many, 1..100." first: Int = 10): [Bet!]! @cost(weight: 10) @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)\n',
      ),
      results: withoutFairnessStats(),
    });
    const impact = await impactOnRecordedTraffic({ db, days: 30, before: CURRENT, after });
    expect(impact.impacts.map((i) => i.verdict)).toEqual(["unchanged", "unchanged", "unchanged"]);
    expect(impact.findings).toEqual([]);
    expect(impact.passes).toEqual(["passes (unused in the last 30 days): FIELD_REMOVED: Query.fairnessStats was removed."]);
  });

  it("the usage rule: removing a field recorded operations use is a finding naming them, and they no longer validate", async () => {
    const after = compose({ networks: edited("networks", '  "How far the indexer has read this network."\n  indexing: IndexingStatus!\n', "") });
    const impact = await impactOnRecordedTraffic({ db, days: 30, before: CURRENT, after });
    expect(impact.impacts.map((i) => [i.name.split(" ")[0], i.verdict, i.requests])).toEqual([
      ["Heads", "invalid", 3n],
      ["BetGame", "unchanged", 2n],
      ["Page", "unchanged", 1n],
    ]);
    expect(impact.findings).toEqual([
      expect.stringMatching(/^used in the last 30 days by Heads [0-9a-f]{12} \(3 requests\): FIELD_REMOVED: NetworkConfig\.indexing was removed\.$/),
    ]);
  });
});
