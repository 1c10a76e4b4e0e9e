// An OTLP/HTTP (JSON) trace collector on loopback for the tests that run our processes with tracing
// on (bin/traces.pg.test.ts, bin/realtime-trace.pg.test.ts): keeps every span it is sent, with the
// name of the service that sent it, and prints a trace as an indented tree.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

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
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

export interface CollectedSpan extends OtlpSpan {
  /** The sending process's `service.name`. */
  service: string;
}

/** OTLP's span kinds (SpanKind + 1 in its JSON). */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface Collector {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

/** A span attribute as text (arrays joined by commas), or undefined. */
export function attribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.arrayValue) return value.arrayValue.values.map((v) => v.stringValue ?? String(v.intValue)).join(",");
  return value.stringValue ?? (value.intValue === undefined ? undefined : String(value.intValue));
}

/** How long a span took, in ms. */
export function durationMs(span: OtlpSpan): number {
  return Number(BigInt(span.endTimeUnixNano ?? 0) - BigInt(span.startTimeUnixNano ?? 0)) / 1e6;
}

export async function startCollector(): Promise<Collector> {
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

/** The OTEL_* environment of a process that exports to `collector` (spans sent 100 ms after they end, not 5 s). */
export function otelEnv(collector: Collector): Record<string, string | undefined> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_TRACES_EXPORTER: undefined,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    OTEL_SERVICE_NAME: undefined,
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
}

/**
 * The spans under `rootParent` (a span id, or "" for a trace's roots) as an indented tree, children
 * under their parent in start order: `service: name  duration  [statement or request id]`.
 */
export function printTree(spans: readonly CollectedSpan[], rootParent: string): string {
  const lines: string[] = [];
  const start = (span: OtlpSpan) => BigInt(span.startTimeUnixNano ?? 0);
  const walk = (parent: string, depth: number) => {
    const children = spans.filter((s) => (s.parentSpanId ?? "") === parent).sort((a, b) => (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : 0));
    for (const span of children) {
      const detail =
        attribute(span, "db.statement")?.replace(/\s+/g, " ").slice(0, 80) ??
        attribute(span, "http.request.header.x-request-id") ??
        attribute(span, "messaging.batch.message_count")?.replace(/^/, "updates: ") ??
        "";
      lines.push(`${"  ".repeat(depth)}${span.service}: ${span.name}  ${durationMs(span).toFixed(1)} ms${detail ? `  [${detail}]` : ""}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(rootParent, 0);
  return lines.join("\n");
}
