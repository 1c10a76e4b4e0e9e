import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningStack } from "../bin/stack.ts";
import { startHttpTransportStack, startTestStack, type TestStack } from "../test/stack.ts";

// The `npm start` stack calls its subgraphs in process (bin/stack.ts): no loopback HTTP request
// reaches a subgraph, and every answer — data, errors, status, Cache-Control — is the one the same
// gateway gives when it reaches the same subgraphs over HTTP, as separate processes do.

let t: TestStack;
let overHttp: RunningStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 80 }, { production: true });
  overHttp = await startHttpTransportStack(t, { production: true });
});
afterAll(async () => {
  await overHttp?.stop();
  await t?.close();
});

/** Requests the node:http servers of this process received on /graphql, by port. */
function countSubgraphRequests<T>(work: () => Promise<T>): Promise<{ result: T; byPort: Map<string, number> }> {
  const byPort = new Map<string, number>();
  const onRequest = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    const port = String(request.socket.localPort);
    byPort.set(port, (byPort.get(port) ?? 0) + 1);
  };
  subscribe("http.server.request.start", onRequest);
  return work()
    .then((result) => ({ result, byPort }))
    .finally(() => unsubscribe("http.server.request.start", onRequest));
}

async function post(url: string, body: unknown) {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, cacheControl: response.headers.get("cache-control"), body: await response.text() };
}

const subgraphPort = (url: string) => new URL(url).port;

describe("the stack's gateway → subgraph calls", () => {
  it("reach no subgraph over HTTP (a query spanning all three subgraphs)", async () => {
    const wallet = t.fixtures.whale;
    // betResult: the results subgraph (a wallet page's results are the history subgraph's too).
    const query = `query($w: Address!) { networkConfigs { name } betResult(chainId: 31337, betId: "1") { status result { outcome } } playerBets(wallet: $w, first: 5) { nodes { betId network { name } result { outcome } } } }`;
    const inProcess = await countSubgraphRequests(() => post(t.url, { query, variables: { w: wallet } }));
    const http = await countSubgraphRequests(() => post(overHttp.url, { query, variables: { w: wallet } }));
    expect(inProcess.result.body).toBe(http.result.body);
    expect(JSON.parse(inProcess.result.body).errors).toBeUndefined();
    const ports = (stack: RunningStack) => Object.values(stack.subgraphUrls).map(subgraphPort);
    // Over HTTP the same query reaches networks, history and results: the check can see requests.
    expect(ports(overHttp).filter((port) => http.byPort.has(port))).toHaveLength(3);
    expect(ports(t.stack).filter((port) => inProcess.byPort.has(port))).toEqual([]);
  });

  const cases: [string, string, Record<string, unknown>?][] = [
    [
      "bet results with proofs",
      `query($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId status result { outcome won payout proof { piA piB piC publicSignals verified } } } }`,
    ],
    ["a bet that does not exist", `{ betResult(chainId: 31337, betId: "999999999") { betId } }`],
    ["an unknown chain (BAD_USER_INPUT from a subgraph)", `{ networkConfigs(chainId: 5) { name } }`],
    ["an edited cursor", `query($w: Address!) { playerBets(wallet: $w, first: 2, after: "not-a-cursor") { nodes { betId } } }`],
    ["a value out of range", `query($w: Address!) { playerBets(wallet: $w, first: 100000) { nodes { betId } } }`],
    ["a field that does not exist (gateway validation)", `{ networkConfigs { nope } }`],
    ["a variable of the wrong type", `query($w: Address!) { playerBets(wallet: $w, first: 1) { nodes { betId } } }`, { w: "0xnot" }],
    ["pending counts and fairness", `query($w: Address!) { pendingBetCount(wallet: $w) fairnessStats(chainId: 31337) { settledBets observedRtp } }`],
    ["the explorer's newest bets", `{ bets(first: 3) { nodes { betId placedTx result { won } } pageInfo { endCursor } } }`],
  ];
  for (const [name, query, variables] of cases) {
    it(`answer the same as over HTTP: ${name}`, async () => {
      const settled = t.fixtures.sampleSettled;
      const vars = variables ?? { ids: settled ? [settled.betId, "1", "2", "999999999"] : ["1"], w: t.fixtures.whale };
      const [inProcess, http] = await Promise.all([post(t.url, { query, variables: vars }), post(overHttp.url, { query, variables: vars })]);
      expect(inProcess).toEqual(http);
    });
  }

  it("a stopped subgraph is SERVICE_UNAVAILABLE by name, as over HTTP", async () => {
    const local = await startTestStack({ bets: 10 }, { production: true });
    try {
      await local.stack.subgraphs.results!.stop();
      const { data, errors } = await local.gql<{ networkConfigs: unknown[]; betResult: unknown }>(
        `{ networkConfigs { name } betResult(chainId: 31337, betId: "1") { betId result { outcome } } }`,
      );
      expect(data?.networkConfigs).toHaveLength(2);
      expect(errors?.[0]?.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", serviceName: "results" });
    } finally {
      await local.close();
    }
  });
});
