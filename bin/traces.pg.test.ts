// Traces across processes (issue 23 item 5): a gateway and two subgraphs, each its own process as an
// operator starts them (bin/gateway.ts, bin/subgraph.ts), export to an OTLP/HTTP (JSON) collector
// in this test. One request, sent with a caller's `traceparent` (what nginx passes on or creates),
// yields one trace: the gateway's server span under the caller's, a client span per subgraph fetch
// (under @apollo/gateway's own plan and fetch spans),
// each subgraph's server span under its fetch, and a span per SQL statement under those.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { seedFixtures, type FixtureSummary } from "../fixtures/seed.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { type Spawned, spawnTsx } from "../test/spawn.ts";

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}
interface CollectedSpan extends OtlpSpan {
  service: string;
}

const SPAN_KIND = { SERVER: 2, CLIENT: 3 } as const;

function attribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.arrayValue) return value.arrayValue.values.map((v) => v.stringValue ?? String(v.intValue)).join(",");
  return value.stringValue ?? (value.intValue === undefined ? undefined : String(value.intValue));
}

/** An OTLP/HTTP JSON collector on loopback: keeps every span it is sent, with its service's name. */
async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; close(): Promise<void> }> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpExport;
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "?";
          for (const scope of resourceSpans.scopeSpans ?? []) for (const span of scope.spans ?? []) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The trace as an indented tree, children under their parent, for the test's output. */
function printTree(spans: CollectedSpan[], rootParent: string): string {
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    for (const span of spans.filter((s) => (s.parentSpanId ?? "") === parent)) {
      const detail = attribute(span, "db.statement")?.replace(/\s+/g, " ").slice(0, 80) ?? attribute(span, "http.request.header.x-request-id") ?? "";
      lines.push(`${"  ".repeat(depth)}${span.service}: ${span.name}${detail ? `  [${detail}]` : ""}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(rootParent, 0);
  return lines.join("\n");
}

describe.runIf(onPostgres)("traces across a gateway and two subgraph processes (OTLP/HTTP)", () => {
  let db: TestDatabase;
  let fixtures: FixtureSummary;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  const children: Spawned[] = [];

  const otel = () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_TRACES_EXPORTER: undefined,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    OTEL_SERVICE_NAME: undefined,
    // The SDK's batch delay (default 5 s): spans reach the collector soon after the request.
    OTEL_BSP_SCHEDULE_DELAY: "100",
  });

  const startSubgraph = async (name: string): Promise<string> => {
    const child = spawnTsx("bin/subgraph.ts", {
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
    const ready = await child.waitForJson<{ url: string }>((line) => line.subgraph === name && typeof line.url === "string", 60_000, `${name} listening`);
    return ready.url;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 20, proofCache: readProofCache() });
    collector = await startCollector();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop()));
    await collector?.close();
    await db?.close();
  });

  it("one request is one trace: gateway -> subgraph fetches -> subgraph requests -> SQL statements", async () => {
    const [networksUrl, historyUrl] = await Promise.all([startSubgraph("networks"), startSubgraph("history")]);
    const gateway = spawnTsx("bin/gateway.ts", {
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
        // Not asked by the request below: nothing listens there.
        RESULTS_SUBGRAPH_URL: "http://127.0.0.1:9/graphql",
      },
    });
    children.push(gateway);
    const { url } = await gateway.waitForJson<{ url: string }>(
      (line) => typeof line.url === "string" && String(line.msg) === "gateway listening",
      60_000,
      "gateway listening",
    );

    // The caller's trace context, as nginx passes it on.
    const traceId = randomBytes(16).toString("hex");
    const callerSpanId = randomBytes(8).toString("hex");
    const requestId = `trace-test-${randomBytes(4).toString("hex")}`;
    const chainId = fixtures.networks[0]!.chainId;
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-${callerSpanId}-01`, "x-request-id": requestId },
      body: JSON.stringify({
        query:
          "query ($c: ChainId, $w: Address!) { networkConfigs(chainId: $c) { indexing { indexedBlock } } playerBets(wallet: $w, first: 1) { totalCount } }",
        variables: { c: Number(chainId), w: fixtures.whale },
      }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();

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
    process.stdout.write(`trace ${traceId}:\n${tree}\n`);

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
  }, 180_000);
});
