import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningStack } from "../bin/stack.ts";
import { READ_PINS_HONOURED_HEADER } from "../core/request-scope.ts";
import { startHttpTransportStack, startTestStack, type TestStack } from "../test/stack.ts";

// The gateway asks a subgraph for each distinct entity once (gateway/entity-dedupe.ts): a page of
// bets on a few networks makes one networks fetch with one representation per network, not one per
// bet. Watched on the wire: the gateway reaches its subgraphs over HTTP here (undici's request
// diagnostics carry each body).

let t: TestStack;
let overHttp: RunningStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
  overHttp = await startHttpTransportStack(t, { production: false });
});
afterAll(async () => {
  await overHttp?.stop();
  await t?.close();
});

/** The bodies this process sent to `url` with undici while `work` ran. */
async function bodiesSentTo<T>(url: string, work: () => Promise<T>): Promise<{ result: T; bodies: string[] }> {
  const target = new URL(url);
  const bodies: string[] = [];
  const onCreate = (message: unknown) => {
    const { request } = message as { request: { origin: string; path: string; body: unknown } };
    if (new URL(request.origin).port !== target.port || request.path !== target.pathname) return;
    if (Buffer.isBuffer(request.body) || typeof request.body === "string") bodies.push(request.body.toString());
  };
  subscribe("undici:request:create", onCreate);
  try {
    return { result: await work(), bodies };
  } finally {
    unsubscribe("undici:request:create", onCreate);
  }
}

interface Page {
  data: {
    playerBets: { nodes: { chainId: number; network: { chainId: number; name: string; contracts: { name: string }[] } }[] };
    networkConfigs: { chainId: number; name: string }[];
  };
}

describe("subgraphs without read replicas", () => {
  it("do not say they read by pin: the gateway may merge identical calls of different requests", async () => {
    for (const url of Object.values(overHttp.subgraphUrls)) {
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
      expect(response.status).toBe(200);
      expect(response.headers.get(READ_PINS_HONOURED_HEADER), url).toBeNull();
    }
  });
});

describe("entity fetches", () => {
  it("carry each distinct representation once: one per network for a page of bets", async () => {
    // contracts: a field only the networks subgraph resolves (a network's name the history subgraph serves itself).
    const query = `query($w: Address!) { networkConfigs { chainId name } playerBets(wallet: $w, first: 50) { nodes { chainId network { chainId name contracts { name } } } } }`;
    const send = () =>
      fetch(`${overHttp.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query, variables: { w: t.fixtures.whale } }),
      }).then((r) => r.json() as Promise<Page>);
    const { result, bodies } = await bodiesSentTo(overHttp.subgraphUrls.networks!, send);
    const nodes = result.data.playerBets.nodes;
    const names = new Map(result.data.networkConfigs.map((n) => [n.chainId, n.name]));
    expect(nodes.length).toBeGreaterThan(10);
    for (const node of nodes)
      expect({ chainId: node.network.chainId, name: node.network.name }).toEqual({ chainId: node.chainId, name: names.get(node.chainId) });
    expect(nodes.every((node) => node.network.contracts.length > 0)).toBe(true);
    const representations = bodies.flatMap((body) => (JSON.parse(body) as { variables?: { representations?: unknown[] } }).variables?.representations ?? []);
    expect(representations).toHaveLength(new Set(nodes.map((n) => n.chainId)).size);
  });
});
