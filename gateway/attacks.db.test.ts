import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// The attack classes of issue 21 that no feature test shows end to end. The others are shown where
// their defence lives: aliased aggregates (gateway/points-budget.db.test.ts), a request flood
// (gateway/rate-limit.db.test.ts), cache-key churn (gateway/response-replay.test.ts: declared
// variables and the normalised operation as the key, the new-entry budget), CSV floods and slow
// CSV readers (gateway/csv-export.db.test.ts, gateway/csv-slow-reader.db.test.ts), socket floods
// (realtime/admission.db.test.ts) and deep replays from stalled sockets
// (realtime/replay-limits.db.test.ts). Here: repeated ids in one betResults, under the default budget.

let t: TestStack;
beforeAll(async () => {
  const protection = gatewayProtection(loadConfig(["shared", "gateway"], {}));
  t = await startTestStack({ bets: 120 }, { protection });
});
afterAll(async () => {
  await t?.close();
});

const QUERY = `query ($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) { betId status result { outcome won payout proof { piA piB piC publicSignals } } }
}`;

interface Answer {
  data?: { betResults: ({ betId: string } | null)[] } | null;
  extensions?: { cost?: { requested: number; actual: number } };
}

/** One GraphQL request as a client POSTs it; its status and JSON body. Bounded: a stuck gateway fails the test, not the run. */
async function post<Body>(request: { query: string; variables?: Record<string, unknown> }): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

function ask(betIds: string[]): Promise<{ status: number; body: Answer }> {
  const { chainId } = t.fixtures.sampleSettled!;
  return post<Answer>({ query: QUERY, variables: { chainId, betIds } });
}

describe("repeated ids in one betResults", () => {
  it("are answered at every position, and cost what the distinct ids cost", async () => {
    const { betId } = t.fixtures.sampleSettled!;
    const once = await ask([betId]);
    const repeated = await ask(Array.from({ length: 100 }, () => betId));
    expect([once.status, repeated.status]).toEqual([200, 200]);
    expect(repeated.body.data?.betResults).toHaveLength(100);
    expect(new Set(repeated.body.data?.betResults.map((bet) => bet?.betId))).toEqual(new Set([betId]));
    expect(once.body.extensions?.cost?.actual).toBeGreaterThan(0);
    expect(repeated.body.extensions?.cost).toEqual(once.body.extensions?.cost);
  });
});

describe("a list literal nested where the schema has none", () => {
  // `betIds: [[["1"]]]` is not a [UInt256!]: the gateway's scalars accept any literal (the subgraphs
  // parse their own), and Apollo's query planner walked such a literal in time doubling with each
  // level (22 levels ~0.9 s; 30: no answer, the process stuck), at 10 points a request.
  it("is refused as a validation error at the door, whatever its depth", async () => {
    const { chainId } = t.fixtures.sampleSettled!;
    for (const depth of [24, 2, 200]) {
      const literal = `${"[".repeat(depth)}"1"${"]".repeat(depth)}`;
      const { status, body } = await post<{ data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }>({
        query: `{ betResults(chainId: ${chainId}, betIds: ${literal}) { betId } }`,
      });
      expect(status, `depth ${depth}`).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]?.extensions?.code, `depth ${depth}`).toBe("GRAPHQL_VALIDATION_FAILED");
      expect(body.errors?.[0]?.message).toBe("Expected a value of type UInt256, found a list");
    }
  }, 60_000);

  it("leaves literals of the right shape alone", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    const { status, body } = await post<Answer>({ query: `{ betResults(chainId: ${chainId}, betIds: ["${betId}", "${betId}"]) { betId } }` });
    expect(status).toBe(200);
    expect(body.data?.betResults.map((bet) => bet?.betId)).toEqual([betId, betId]);
  });
});
