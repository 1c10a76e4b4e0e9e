// OpenTelemetry traces across processes (W3C trace context): off unless the standard OTEL_*
// variables ask for them (core/config.ts). When off, the spans below are OpenTelemetry's no-ops:
// nothing is recorded, sent or injected, and SQL statements are not wrapped at all.
import type { IncomingHttpHeaders } from "node:http";
import { waitAtMost } from "./wait-at-most.ts";
import { context, INVALID_SPAN_CONTEXT, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";

export interface TracingSettings {
  /** `otlp` or `none`; unset: on when an OTLP endpoint is set. */
  exporter: "otlp" | "none" | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (`/v1/traces` is appended). */
  endpoint: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the traces URL as is. */
  tracesEndpoint: string | undefined;
  /** OTEL_SERVICE_NAME; unset: the process's own name. */
  serviceName: string | undefined;
}

export interface Tracing {
  enabled: boolean;
  /** Sends the spans still buffered and stops. */
  stop(): Promise<void>;
}

const TRACER_NAME = "bet-results-api";
/** The most a stopping process waits for its buffered spans to reach the collector. */
const TRACES_FLUSH_MS = 2_000;
let enabled = false;

/** Whether this process records spans (SQL statements are wrapped only then). */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The OTLP/HTTP traces URL the settings name, or undefined when tracing is off. */
export function tracesUrl(settings: TracingSettings): string | undefined {
  if (settings.exporter === "none") return undefined;
  const url = settings.tracesEndpoint ?? (settings.endpoint ? `${settings.endpoint.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (settings.exporter === "otlp") return url ?? "http://localhost:4318/v1/traces";
  return url;
}

/**
 * Starts tracing for this process (composition roots only, once): the W3C trace-context propagator,
 * async context across awaits, and a batching OTLP/HTTP (JSON) exporter. The SDK and exporter are
 * loaded here, only when tracing is on: every process and test imports this module (core/http.ts,
 * core/db.ts), and loading them costs ~100 ms of start-up.
 */
export async function startTracing(settings: TracingSettings, processName: string): Promise<Tracing> {
  const url = tracesUrl(settings);
  if (!url) return { enabled: false, stop: async () => undefined };
  const [{ OTLPTraceExporter }, { Resource }, { BatchSpanProcessor, NodeTracerProvider }] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/sdk-trace-node"),
  ]);
  const provider = new NodeTracerProvider({
    resource: new Resource({ "service.name": settings.serviceName ?? processName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // Registers W3C trace context (and baggage) as the propagator and AsyncLocalStorage as the context manager.
  provider.register();
  enabled = true;
  return {
    enabled: true,
    async stop() {
      enabled = false;
      // A collector that never answers held this for the exporter's 10 s timeout: with a 10 s HTTP
      // drain before it, past the shutdown deadline (bin/wiring.ts). Spans not sent by then are dropped.
      await waitAtMost(provider.shutdown(), TRACES_FLUSH_MS);
    },
  };
}

const tracer = () => trace.getTracer(TRACER_NAME);
/** Handed to work when tracing is off: records nothing (the requests' path then costs no span at all). */
const NOT_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

async function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The server span of one HTTP request, child of the caller's `traceparent` when it sends a valid
 * one (a new trace otherwise), carrying the request id every log line of the request carries.
 */
export function serveTraced<T>(
  request: { method?: string | undefined; url?: string | undefined; headers: IncomingHttpHeaders },
  requestId: string,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!enabled) return work(NOT_RECORDING);
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const method = request.method ?? "GET";
  const span = tracer().startSpan(
    `${method} ${path}`,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": method, "url.path": path, "http.request.header.x-request-id": [requestId] } },
    parent,
  );
  return inSpan(span, () => work(span));
}

/** A client span around a call to another service of ours; `headers` get its `traceparent`. */
export function callTraced<T>(
  name: string,
  attributes: Record<string, string>,
  headers: Record<string, string>,
  work: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!enabled) return work(headers);
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
  const carrier = { ...headers };
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return inSpan(span, () => work(carrier));
}

/**
 * A client span around one SQL statement (its text, never its parameters), only inside a traced
 * operation: the pollers' reads between operations (the indexer's, the publisher's, health checks)
 * would each be a trace of one span.
 */
export function queryTraced<T>(statement: string, work: () => Promise<T>): Promise<T> {
  if (!trace.getSpan(context.active())?.isRecording()) return work();
  const operation = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? "SQL";
  const span = tracer().startSpan(operation, { kind: SpanKind.CLIENT, attributes: { "db.system": "postgresql", "db.statement": statement } });
  return inSpan(span, work);
}

/**
 * A span of work that starts a trace of its own (the indexer's commit of a block: nothing calls
 * it), with `work`'s SQL statements under it. Off: `work` alone.
 */
export function rootTraced<T>(name: string, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  return inSpan(tracer().startSpan(name, { kind: SpanKind.INTERNAL, root: true, attributes }), work);
}

/**
 * The W3C `traceparent` of the active span, to store or send with what it produced (the outbox
 * rows of a commit, a feed message); undefined when this process does not trace or no span is active.
 */
export function activeTraceparent(): string | undefined {
  if (!enabled || !trace.getSpan(context.active())?.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** What a span continuing a stored or carried trace context is: the publisher's sending, a node's delivery. */
export type HandOffKind = "producer" | "consumer";

/**
 * A span continuing the trace context `traceparent` carries (stored with outbox rows, or sent with
 * a feed message); `work` gets this span's own `traceparent` to pass on. Without a context, or
 * when this process does not trace: `work(undefined)`, no span.
 */
export function continueTraced<T>(
  traceparent: string | undefined | null,
  name: string,
  kind: HandOffKind,
  attributes: Record<string, string | number>,
  work: (traceparent: string | undefined) => Promise<T>,
): Promise<T> {
  if (!enabled || !traceparent) return work(undefined);
  const parent = propagation.extract(ROOT_CONTEXT, { traceparent });
  const span = tracer().startSpan(name, { kind: kind === "producer" ? SpanKind.PRODUCER : SpanKind.CONSUMER, attributes }, parent);
  return inSpan(span, () => work(activeTraceparent()));
}
