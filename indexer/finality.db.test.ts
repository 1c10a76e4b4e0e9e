// A reorg deeper than finality (the common ancestor below head − confirmations as last published)
// is a hard, non-retryable error — unless the network is configured to re-index from scratch when
// its chain no longer holds the indexed history (a restarted dev chain).
import { afterEach, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer, type IndexerEvent } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { snapshotTables } from "../test/tables.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  await releaseProverResources();
});

async function setup(resetOnChainMismatch: boolean) {
  const chain: TestChain = await startTestChain();
  cleanup.push(() => chain.stop());
  const db: TestDatabase = await createTestDatabase();
  cleanup.push(() => db.close());
  const events: IndexerEvent[] = [];
  const indexer: Indexer = createIndexer({ db, logger, networks: [chain.network({ confirmations: 2, resetOnChainMismatch })], onEvent: (e) => events.push(e) });
  cleanup.push(() => indexer.stop());
  await indexer.start();
  await indexer.synced();

  // Fork 4 blocks deep with 2 confirmations: the ancestor lies below the published finalized block.
  const { driver, test } = chain;
  await driver.ensureCommitments(8);
  const snapshot = await test.snapshot();
  for (let i = 0; i < 4; i++) {
    await driver.place(i);
    await driver.mine();
  }
  await indexer.synced();
  const before = await snapshotTables(db);
  await test.revert({ id: snapshot });
  for (let i = 0; i < 5; i++) {
    await driver.place(i + 4, { game: "dice" });
    await driver.mine();
  }
  return { chain, db, indexer, events, before };
}

it("stops the network with ReorgTooDeepError and leaves the data as it was", async () => {
  const { db, indexer, events, before } = await setup(false);
  await expect(indexer.synced({ timeoutMs: 20_000 })).rejects.toMatchObject({ name: "ReorgTooDeepError", retryable: false, code: "REORG_TOO_DEEP" });
  expect(events.filter((e) => e.type === "fatal")).toHaveLength(1);
  expect(events.some((e) => e.type === "error")).toBe(false); // never retried
  expect(indexer.status()[0]?.failed?.code).toBe("REORG_TOO_DEEP");
  expect(await snapshotTables(db)).toEqual(before);
});

it("with resetOnChainMismatch, re-indexes the new chain from the deploy block (REMOVED for every old bet)", async () => {
  const { chain, db, indexer, events } = await setup(true);
  await indexer.synced({ timeoutMs: 20_000 });
  expect(events.filter((e) => e.type === "reset")).toHaveLength(1);
  expect(events.some((e) => e.type === "fatal")).toBe(false);

  const fresh = await createTestDatabase();
  cleanup.push(() => fresh.close());
  const freshIndexer = createIndexer({ db: fresh, logger, networks: [chain.network({ confirmations: 2 })] });
  cleanup.push(() => freshIndexer.stop());
  await freshIndexer.start();
  await freshIndexer.synced();
  const mine = await snapshotTables(db, { withDepth: false });
  const theirs = await snapshotTables(fresh, { withDepth: false });
  expect(mine.bets).toEqual(theirs.bets);
  const types = mine.updates.map((u) => (u as { type: string }).type);
  expect(types).toEqual([...Array(4).fill("PLACED"), ...Array(4).fill("REMOVED"), ...Array(5).fill("PLACED")]);
});
