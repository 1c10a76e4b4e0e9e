import { createServer, type Socket } from "node:net";
import { afterAll, expect, it } from "vitest";
import { rootTraced, startTracing } from "./tracing.ts";

// A collector that accepts and never answers (hung, or a proxy blackholing it) must not hold a
// stopping process past its shutdown deadline (bin/wiring.ts stopOnSignals): the buffered spans are
// given a bounded while, then dropped.
const held: Socket[] = [];
const collector = createServer((socket) => void held.push(socket));
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => collector.close(resolve));
});

it("stops within a few seconds while the collector never answers", async () => {
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const { port } = collector.address() as { port: number };
  const tracing = await startTracing(
    { exporter: "otlp", endpoint: `http://127.0.0.1:${port}`, tracesEndpoint: undefined, serviceName: "stop-test" },
    "stop-test",
  );
  await rootTraced("buffered", {}, async () => undefined);
  const started = Date.now();
  await tracing.stop();
  expect(Date.now() - started).toBeLessThan(4_000);
}, 40_000);
