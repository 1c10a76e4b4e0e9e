// Traces are off unless the standard OTEL_* variables ask for them (core/config.ts declares them).
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { activeTraceparent, continueTraced, rootTraced, type TracingSettings, tracesUrl } from "./tracing.ts";

/** The tracing settings bin/wiring.ts reads from this environment. */
function settingsOf(env: Record<string, string>): TracingSettings {
  const config = loadConfig(["shared"], env);
  return {
    exporter: config.OTEL_TRACES_EXPORTER,
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    tracesEndpoint: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    serviceName: config.OTEL_SERVICE_NAME,
  };
}

describe("tracesUrl", () => {
  it("is off by default", () => {
    expect(tracesUrl(settingsOf({}))).toBeUndefined();
  });

  it("sends to the endpoint's /v1/traces once one is set", () => {
    expect(tracesUrl(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }))).toBe("http://collector:4318/v1/traces");
  });

  it("takes the traces endpoint as is, over the base endpoint", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/in" };
    expect(tracesUrl(settingsOf(env))).toBe("http://traces:9999/in");
  });

  it("with OTEL_TRACES_EXPORTER=otlp and no endpoint, sends to the standard local collector", () => {
    expect(tracesUrl(settingsOf({ OTEL_TRACES_EXPORTER: "otlp" }))).toBe("http://localhost:4318/v1/traces");
  });

  it("with OTEL_TRACES_EXPORTER=none, stays off even with an endpoint", () => {
    expect(tracesUrl(settingsOf({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }))).toBeUndefined();
  });

  it("refuses an exporter it does not speak, at start-up", () => {
    expect(() => settingsOf({ OTEL_TRACES_EXPORTER: "jaeger" })).toThrow(/OTEL_TRACES_EXPORTER/);
  });
});

describe("with tracing off (the default)", () => {
  it("stores and carries no trace context, and runs the work as is", async () => {
    expect(activeTraceparent()).toBeUndefined();
    const stored = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(await continueTraced(stored, "publish bets:feed", "producer", {}, async (traceparent) => traceparent)).toBeUndefined();
    expect(await rootTraced("indexer commit", {}, async () => activeTraceparent())).toBeUndefined();
  });
});
