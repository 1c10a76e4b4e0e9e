import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiSchemaOf } from "../core/schema.ts";
import { largestDocumentedRequests } from "../test/largest-request.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// The contract's limits end to end under the default settings: every documented maximum is
// answered, out-of-range arguments are BAD_USER_INPUT naming the argument (never a cost refusal),
// and abusive shapes are still refused.

let t: TestStack;
let requests: Record<string, string>;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
  const chainId = t.fixtures.sampleSettled?.chainId ?? 31337;
  requests = Object.fromEntries(
    Object.entries(largestDocumentedRequests(apiSchemaOf(readFileSync("supergraph.graphql", "utf8")), chainId)).map(([field, query]) => [
      field,
      query.replaceAll("0x000000000000000000000000000000000000dead", t.fixtures.whale),
    ]),
  );
});
afterAll(async () => {
  await t?.close();
});

describe("documented maxima", () => {
  it.each(["betResults", "playerBets", "betResult", "networkConfigs", "pendingBetCount", "health"])("answers the largest %s", async (field) => {
    const query = requests[field];
    expect(query, `${field} is a root field`).toBeDefined();
    const { status, data, errors } = await t.gql(query!);
    expect(errors).toBeUndefined();
    expect(status).toBe(200);
    expect(data).toHaveProperty(field);
  });

  it("answers a whole 100-bet page of the whale with every field and no filter", async () => {
    const query = requests.playerBets!.replace(/filter: \{[^}]*\}, /, "");
    const { data, errors } = await t.gql<{ playerBets: { nodes: { result: unknown }[]; totalCount: number } }>(query);
    expect(errors).toBeUndefined();
    expect(data?.playerBets.nodes.length).toBe(Math.min(100, data?.playerBets.totalCount ?? -1));
    expect(data?.playerBets.nodes.some((bet) => bet.result !== null)).toBe(true);
  });
});

describe("argument ranges before cost", () => {
  it("playerBets(first: 3000) with every field is BAD_USER_INPUT naming first", async () => {
    const { status, errors } = await t.gql(requests.playerBets!.replace("first: 100", "first: 3000"));
    expect(status).toBe(400);
    expect(errors?.[0]).toMatchObject({ message: "first must be from 1 to 100", extensions: { code: "BAD_USER_INPUT", argumentName: "first" } });
  });

  it("betResults with 2 000 ids is BAD_USER_INPUT naming betIds", async () => {
    const ids = Array.from({ length: 2000 }, (_, i) => String(i + 1));
    const query = requests.betResults!.replace(/betIds: \[[^\]]*\]/, "betIds: $ids").replace("{ betResults(", "query ($ids: [UInt256!]!) { betResults(");
    const { status, errors } = await t.gql(query, { ids });
    expect(status).toBe(400);
    expect(errors?.[0]).toMatchObject({ message: "betIds takes at most 100 ids", extensions: { code: "BAD_USER_INPUT", argumentName: "betIds" } });
  });
});

describe("abuse", () => {
  it("refuses 30 aliases of maximum pages as QUERY_TOO_COMPLEX", async () => {
    const pages = Array.from({ length: 30 }, (_, i) => `p${i}: playerBets(wallet: "${t.fixtures.whale}", first: 100) { nodes { betId } }`);
    const { status, errors } = await t.gql(`{ ${pages.join(" ")} }`);
    expect(status).toBe(400);
    expect(errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", limit: "cost", max: 5000 });
  });
});
