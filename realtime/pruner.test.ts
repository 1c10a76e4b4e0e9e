import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import type { PruneOptions, Retention } from "../core/outbox.ts";
import { OutboxPruner } from "./pruner.ts";

const RETENTION: Retention = { maxUpdates: 10, maxAgeMs: 1_000 };

/** An outbox whose prune takes `ms` and deletes `batches` full batches, then nothing. */
function slowOutbox(ms: number, batches: number) {
  const calls: PruneOptions[] = [];
  let full = batches;
  return {
    calls,
    outbox: {
      async prune(_retention: Retention, options: PruneOptions) {
        calls.push(options);
        await new Promise((resolve) => setTimeout(resolve, ms));
        return full-- > 0 ? options.batchSize : 0;
      },
      oldest: async () => 1n,
    },
  };
}

describe("OutboxPruner", () => {
  it("sweeps at once in full batches, keeping what is not published, and counts the rows", async () => {
    const { outbox, calls } = slowOutbox(1, 3);
    const pruner = new OutboxPruner({
      outbox,
      logger: silentLogger(),
      settings: { intervalMs: 60_000, batchSize: 7, retention: RETENTION },
      published: () => 42n,
    });
    pruner.start();
    await expect.poll(() => calls.length, { timeout: 2_000 }).toBe(4);
    await pruner.stop();
    expect(pruner.pruned()).toBe(21);
    expect(calls.every((c) => c.batchSize === 7 && c.keepAbove === 42n)).toBe(true);
  });

  it("stops within a sweep's batch, not an interval later, when stopped during a sweep", async () => {
    const { outbox, calls } = slowOutbox(100, 0);
    const pruner = new OutboxPruner({
      outbox,
      logger: silentLogger(),
      settings: { intervalMs: 60_000, batchSize: 7, retention: RETENTION },
      published: () => 0n,
    });
    pruner.start();
    await expect.poll(() => calls.length, { timeout: 2_000 }).toBe(1);
    const started = performance.now();
    await pruner.stop();
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
