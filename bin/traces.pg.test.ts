// Traces across processes (issue 23 item 5), through the production proxy: Debian's nginx running
// deploy/nginx.conf (test/nginx.ts) in front of a gateway and two subgraphs, each its own process as
// an operator starts them (bin/gateway.ts, bin/subgraph.ts), exporting to an OTLP/HTTP (JSON)
// collector in this test (test/otlp-collector.ts). One request, sent with a caller's `traceparent`
// and `X-Request-Id`, yields one trace under the caller's span: the gateway's server span (carrying
// the request id), a client span per subgraph fetch (under @apollo/gateway's own plan and fetch
// spans), each subgraph's server span under its fetch, and a span per SQL statement under those.
// Without a caller's context, nginx makes one whose trace id is its request id: the trace is found
// by the id in its access log.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { seedFixtures, type FixtureSummary } from "../fixtures/seed.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { type Spawned, spawnTypeScript } from "../test/spawn.ts";
import { nginxBinary, startNginx, type RunningNginx } from "../test/nginx.ts";
import { attribute, type CollectedSpan, type Collector, otelEnv, printTree, SPAN_KIND, startCollector } from "../test/otlp-collector.ts";
import { describeWith } from "../test/services.ts";

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";

describe.runIf(onPostgres)("traces across a gateway and two subgraph processes (OTLP/HTTP)", () => {
  describeWith(nginxBinary, "through the production proxy (deploy/nginx.conf)", traceSuite);
});

function traceSuite(): void {
  let db: TestDatabase;
  let fixtures: FixtureSummary;
  let collector: Collector;
  let nginx: RunningNginx;
  const children: Spawned[] = [];

  const otel = () => otelEnv(collector);

  const startSubgraph = async (name: string): Promise<string> => {
    const child = spawnTypeScript("bin/subgraph.ts", {
      args: [name],
      env: {
        ...otel(),
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: db.url,
        LOG_LEVEL: "info",
        NODE_ENV: undefined,
        REDIS_URL: undefined,
        DATABASE_READ_URLS: undefined,
      },
    });
    children.push(child);
    const ready = await child.waitForJson<{ url: string }>((line) => line.subgraph === name && typeof line.url === "string", 150_000, `${name} listening`);
    return ready.url;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 20, proofCache: readProofCache() });
    collector = await startCollector();
    const [networksUrl, historyUrl] = await Promise.all([startSubgraph("networks"), startSubgraph("history")]);
    const gateway = spawnTypeScript("bin/gateway.ts", {
      env: {
        ...otel(),
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: db.url,
        LOG_LEVEL: "info",
        NODE_ENV: undefined,
        REDIS_URL: undefined,
        GATEWAY_SOCKETIO: undefined,
        NETWORKS_SUBGRAPH_URL: networksUrl,
        HISTORY_SUBGRAPH_URL: historyUrl,
        // Not asked by the requests below: nothing listens there.
        RESULTS_SUBGRAPH_URL: "http://127.0.0.1:9/graphql",
      },
    });
    children.push(gateway);
    const { url } = await gateway.waitForJson<{ url: string }>(
      (line) => typeof line.url === "string" && String(line.msg) === "gateway listening",
      150_000,
      "gateway listening",
    );
    // Both of the proxy's gateways are this one; no realtime node is asked (port 9: nothing listens).
    const port = Number(new URL(url).port);
    nginx = await startNginx({ gatewayPorts: [port, port], realtimePorts: [9, 9] });
  }, 420_000);
  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(children.map((child) => child.stop()));
    await collector?.close();
    await db?.close();
  });

  /** Asks both subgraphs, through nginx, with these headers; resolves to nginx's X-Request-Id answer. */
  const query = async (headers: Record<string, string>): Promise<string> => {
    const chainId = fixtures.networks[0]!.chainId;
    const response = await fetch(`${nginx.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({
        query:
          "query ($c: ChainId, $w: Address!) { networkConfigs(chainId: $c) { indexing { indexedBlock } } playerBets(wallet: $w, first: 1) { totalCount } }",
        variables: { c: Number(chainId), w: fixtures.whale },
      }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return response.headers.get("x-request-id") ?? "";
  };

  it("one request through nginx is one trace under the caller's: gateway -> subgraph fetches -> subgraph requests -> SQL", async () => {
    // The caller's trace context and request id, which nginx passes on as they are valid.
    const traceId = randomBytes(16).toString("hex");
    const callerSpanId = randomBytes(8).toString("hex");
    const requestId = `trace-test-${randomBytes(4).toString("hex")}`;
    expect(await query({ traceparent: `00-${traceId}-${callerSpanId}-01`, "x-request-id": requestId })).toBe(requestId);

    const inTrace = () => collector.spans.filter((span) => span.traceId === traceId);
    const childrenOf = (span: CollectedSpan) => inTrace().filter((s) => s.parentSpanId === span.spanId);
    const descendantsOf = (span: CollectedSpan): CollectedSpan[] => childrenOf(span).flatMap((child) => [child, ...descendantsOf(child)]);
    const subgraphServer = (name: string) =>
      inTrace().find((s) => s.service === `subgraph-${name}` && s.kind === SPAN_KIND.SERVER && s.name === "POST /graphql");
    // Complete once both subgraphs' server spans and their SQL statements have arrived.
    await eventually(
      () =>
        ["networks", "history"].every((name) => {
          const server = subgraphServer(name);
          return server !== undefined && childrenOf(server).some((s) => attribute(s, "db.statement"));
        }) && inTrace().some((s) => s.service === "gateway" && s.kind === SPAN_KIND.SERVER),
      30_000,
      () => `the trace's spans (so far:\n${printTree(inTrace(), callerSpanId)})`,
    );
    const tree = printTree(inTrace(), callerSpanId);
    process.stdout.write(`trace ${traceId} (caller's span ${callerSpanId}, through nginx):\n${tree}\n`);

    // The gateway's server span continues the caller's trace and carries the request id.
    const roots = inTrace().filter((s) => s.parentSpanId === callerSpanId);
    expect(roots.map((s) => [s.service, s.name, s.kind])).toEqual([["gateway", "POST /graphql", SPAN_KIND.SERVER]]);
    const root = roots[0]!;
    expect(attribute(root, "http.request.header.x-request-id")).toBe(requestId);

    for (const name of ["networks", "history"]) {
      // A client span per subgraph fetch under the gateway's request (below @apollo/gateway's own
      // spans of its plan and fetches, which it records once a tracer is registered)...
      const fetches = descendantsOf(root).filter((s) => s.name === `subgraph ${name}`);
      expect(fetches.map((s) => [s.service, s.kind])).toEqual([["gateway", SPAN_KIND.CLIENT]]);
      // ...the subgraph's server span under that fetch (its traceparent crossed the process)...
      const served = childrenOf(fetches[0]!);
      expect(served.map((s) => [s.service, s.name, s.kind])).toEqual([[`subgraph-${name}`, "POST /graphql", SPAN_KIND.SERVER]]);
      // ...and its SQL statements under that.
      const statements = childrenOf(served[0]!).filter((s) => s.kind === SPAN_KIND.CLIENT);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(statement.service).toBe(`subgraph-${name}`);
        expect(attribute(statement, "db.system")).toBe("postgresql");
        expect(attribute(statement, "db.statement")).toMatch(/^\s*(SELECT|WITH)\b/i);
      }
    }
    // Every span of the trace hangs under the caller's: nothing detached.
    const ids = new Set([callerSpanId, ...inTrace().map((s) => s.spanId)]);
    expect(inTrace().filter((s) => !ids.has(s.parentSpanId ?? ""))).toEqual([]);
    // nginx logged the same request id and trace context.
    await eventually(() => nginx.accessLog().some((line) => line.requestId === requestId), 10_000, "nginx's access log line");
    expect(nginx.accessLog().find((line) => line.requestId === requestId)?.traceparent).toBe(`00-${traceId}-${callerSpanId}-01`);
  }, 180_000);

  it("without a caller's context, nginx starts the trace: its id is the request id in nginx's access log", async () => {
    const requestId = await query({});
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    const logged = () => nginx.accessLog().find((line) => line.requestId === requestId);
    await eventually(() => logged() !== undefined, 10_000, "nginx's access log line");
    const [, traceId, parentId] = logged()!.traceparent.split("-");
    expect(traceId).toBe(requestId);
    const gatewaySpan = () => collector.spans.find((s) => s.traceId === traceId && s.service === "gateway" && s.kind === SPAN_KIND.SERVER);
    await eventually(() => gatewaySpan() !== undefined, 30_000, "the gateway's server span in nginx's trace");
    expect(gatewaySpan()!.parentSpanId).toBe(parentId);
    expect(attribute(gatewaySpan()!, "http.request.header.x-request-id")).toBe(requestId);
    // Each subgraph process exports its spans in its own batches: they may come after the gateway's.
    const subgraphServerSpans = () => collector.spans.filter((s) => s.traceId === traceId && s.service.startsWith("subgraph-") && s.kind === SPAN_KIND.SERVER);
    await eventually(() => subgraphServerSpans().length >= 2, 30_000, "both subgraphs' server spans in nginx's trace");
    expect(subgraphServerSpans().length).toBe(2);
  }, 120_000);
}
