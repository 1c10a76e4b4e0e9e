import type { ApolloServerPlugin } from "@apollo/server";
import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import type { RouteHandler } from "./http.ts";

// Prometheus metrics, one registry per service process, served at GET /metrics. Operation names
// come from clients, so as labels they are bounded: a safe shape, the names the service was told
// about, and the first `maxOperationLabels` other names seen; every later name is `other`.

export interface ServiceMetrics {
  registry: Registry;
  requests: Counter<"operation" | "outcome">;
  duration: Histogram<"operation">;
  /** Apollo plugin recording every GraphQL request. */
  plugin: ApolloServerPlugin;
  /** Records a GraphQL request answered without Apollo Server (a replayed cache hit) as the plugin records the others. */
  record(operationName: string | null | undefined, outcome: "ok" | "error", seconds: number): void;
  route: RouteHandler;
}

const SECONDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Distinct client-chosen operation names labelled per process beyond the known ones. */
export const DEFAULT_MAX_OPERATION_LABELS = 100;

/** Maps operation names to a bounded set of labels: `anonymous`, `other`, known and first-seen names. */
export function operationLabeller(
  options: { knownOperations?: readonly string[]; maxOperationLabels?: number } = {},
): (name: string | null | undefined) => string {
  const known = new Set(options.knownOperations ?? []);
  const seen = new Set<string>();
  const max = options.maxOperationLabels ?? DEFAULT_MAX_OPERATION_LABELS;
  return (name) => {
    if (!name || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return "anonymous";
    if (known.has(name) || seen.has(name)) return name;
    if (seen.size >= max) return "other";
    seen.add(name);
    return name;
  };
}

/** A process's registry: every metric labelled with its service, plus Node's process metrics unless turned off. */
export function registryFor(service: string, defaultMetrics: boolean): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (defaultMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

export interface ServiceMetricsOptions {
  defaultMetrics?: boolean;
  /** Operation names always labelled as themselves (e.g. the client package's operations). */
  knownOperations?: readonly string[];
  /** Other distinct operation names labelled before every further one is `other`; default 100. */
  maxOperationLabels?: number;
}

export function createServiceMetrics(service: string, options: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = registryFor(service, options.defaultMetrics ?? true);
  const operationLabel = operationLabeller(options);
  const requests = new Counter({
    name: "graphql_requests_total",
    help: "GraphQL requests by operation name (bounded: anonymous, other, or one of a capped set) and outcome (ok, error)",
    labelNames: ["operation", "outcome"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "graphql_request_duration_seconds",
    help: "GraphQL request latency by operation name",
    labelNames: ["operation"] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  return {
    registry,
    requests,
    duration,
    plugin: {
      async requestDidStart() {
        const stop = duration.startTimer();
        return {
          async willSendResponse({ operationName, response }) {
            const operation = operationLabel(operationName);
            stop({ operation });
            const failed = response.body.kind === "single" && (response.body.singleResult.errors?.length ?? 0) > 0;
            requests.inc({ operation, outcome: failed ? "error" : "ok" });
          },
        };
      },
    },
    record(operationName, outcome, seconds) {
      const operation = operationLabel(operationName);
      duration.observe({ operation }, seconds);
      requests.inc({ operation, outcome });
    },
    route: metricsRoute(registry),
  };
}

/** GET /metrics for a registry, in Prometheus' text format. */
export function metricsRoute(registry: Registry): RouteHandler {
  return async (_req, res) => {
    const text = await registry.metrics();
    res.writeHead(200, { "content-type": registry.contentType });
    res.end(text);
  };
}
