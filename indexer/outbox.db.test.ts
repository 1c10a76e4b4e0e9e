// seq is strictly increasing in COMMIT order with several networks indexed concurrently: a reader
// polling the outbox while two chains are indexed into one database (small transactions, random
// delays between the outbox insert and COMMIT) never sees a seq appear below one it already saw.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer } from "./indexer.ts";
import { startTestChain, type TestChain } from "./test-harness.ts";

const logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent", name: "indexer-test" });
const chains: TestChain[] = [];
let db: TestDatabase;
let indexer: Indexer | undefined;
const BLOCKS = 40;

beforeAll(async () => {
  for (const chainId of [31337, 31338]) {
    const chain = await startTestChain({ chainId });
    chains.push(chain);
    await chain.driver.ensureCommitments(BLOCKS * 2);
    for (let b = 0; b < BLOCKS; b++) {
      await chain.driver.place(b);
      await chain.driver.place(b + 1);
      await chain.driver.mine();
    }
  }
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await indexer?.stop();
  await db?.close();
  await releaseProverResources();
  for (const chain of chains) await chain.stop();
});

it("never lets a reader see a smaller seq commit after a larger one", async () => {
  indexer = createIndexer({
    db,
    logger,
    networks: chains.map((c) => c.network({ rpc: { http: c.anvil.rpcUrl }, confirmations: 0, batchSize: 1 })),
    maxEventsPerCommit: 1,
    // Widen the window between taking seq values and COMMIT.
    hooks: { beforeCommit: () => new Promise((r) => setTimeout(r, Math.random() * 4)) },
  });
  const seen = new Set<bigint>();
  let maxSeen = 0n;
  const late: bigint[] = [];
  let polls = 0;
  let done = false;
  const reader = (async () => {
    while (!done) {
      const rows = await db.prisma.betUpdate.findMany({ select: { seq: true }, orderBy: { seq: "asc" } });
      for (const { seq } of rows) {
        if (seen.has(seq)) continue;
        if (seq < maxSeen) late.push(seq);
        seen.add(seq);
      }
      maxSeen = rows.at(-1)?.seq ?? maxSeen;
      polls++;
      // PGlite answers in-process: yield so timers and sockets get their turn.
      await new Promise((r) => setImmediate(r));
    }
  })();
  await indexer.start();
  await indexer.synced({ timeoutMs: 50_000 });
  done = true;
  await reader;

  expect(seen.size).toBe(2 * BLOCKS * 2);
  expect(polls).toBeGreaterThan(10);
  expect(late).toEqual([]);
  // Both networks really were indexed side by side: their updates interleave in seq order.
  const order = await db.prisma.betUpdate.findMany({ select: { chainId: true }, orderBy: { seq: "asc" } });
  const switches = order.filter((u, i) => i > 0 && u.chainId !== order[i - 1]?.chainId).length;
  expect(switches).toBeGreaterThan(5);
});
