import { ApolloServer } from "@apollo/server";
import { describe, expect, it } from "vitest";
import { createServiceMetrics } from "./metrics.ts";

// Operation names are chosen by clients; as Prometheus labels they must not create unbounded series.

async function serveWith(metrics: ReturnType<typeof createServiceMetrics>) {
  const server = new ApolloServer({ typeDefs: "type Query { a: Int }", resolvers: { Query: { a: () => 1 } }, plugins: [metrics.plugin] });
  await server.start();
  return server;
}

function operationLabels(metrics: ReturnType<typeof createServiceMetrics>): Promise<Set<string>> {
  return metrics.requests.get().then(({ values }) => new Set(values.map((v) => String(v.labels.operation))));
}

describe("operation label cardinality", () => {
  it("10 000 distinct operation names make a bounded number of series", async () => {
    const metrics = createServiceMetrics("test", { defaultMetrics: false });
    const server = await serveWith(metrics);
    try {
      for (let i = 0; i < 10_000; i++) await server.executeOperation({ query: `query Op${i} { a }` });
      const labels = await operationLabels(metrics);
      expect(labels.size).toBeLessThanOrEqual(102);
      expect(labels.has("other")).toBe(true);
      const text = await metrics.registry.metrics();
      const series = text.split("\n").filter((line) => line.startsWith("graphql_requests_total{"));
      expect(series.length).toBeLessThanOrEqual(2 * 102);
      const total = (await metrics.requests.get()).values.reduce((sum, v) => sum + v.value, 0);
      expect(total).toBe(10_000);
    } finally {
      await server.stop();
    }
  });

  it("keeps the names it was told about even after the cap is spent", async () => {
    const metrics = createServiceMetrics("test", { defaultMetrics: false, knownOperations: ["PlayerBets"] });
    const server = await serveWith(metrics);
    try {
      for (let i = 0; i < 500; i++) await server.executeOperation({ query: `query Junk${i} { a }` });
      await server.executeOperation({ query: "query PlayerBets { a }" });
      const labels = await operationLabels(metrics);
      expect(labels.has("PlayerBets")).toBe(true);
      expect(labels.has("Junk499")).toBe(false);
    } finally {
      await server.stop();
    }
  });
});
