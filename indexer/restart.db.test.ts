// Idempotent restarts: an indexer stopped between batches, one that crashes inside a write
// transaction, and (on PostgreSQL) a `bin/indexer.ts` process killed with SIGKILL mid-backfill,
// each restarted on the same database, end identical to an uninterrupted run: no duplicate, no gap.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import type { NetworkConfig } from "./config.ts";
import { createIndexer, type IndexerDeps } from "./indexer.ts";
import { networksFileJson, startTestChain, type TestChain } from "../test/chain.ts";
import { spawnTypeScript } from "../test/spawn.ts";
import { snapshotTables, type TableSnapshot } from "../test/tables.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
let chain: TestChain;
let network: NetworkConfig;
let reference: TableSnapshot;
let head: bigint;
const dbs: TestDatabase[] = [];

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
}

/** Runs an indexer on `db` until it has indexed the chain's head, then stops it. */
async function indexToHead(db: TestDatabase, extra: Partial<IndexerDeps> = {}): Promise<void> {
  const indexer = createIndexer({ db, logger, networks: [network], maxEventsPerCommit: 3, ...extra });
  try {
    await indexer.start();
    await indexer.synced();
  } finally {
    await indexer.stop();
  }
}

async function cursorBlock(db: TestDatabase): Promise<bigint> {
  const cursor = await db.prisma.indexingCursor.findUnique({ where: { chainId: BigInt(network.chainId) } });
  return cursor?.indexedBlock ?? -1n;
}

beforeAll(async () => {
  chain = await startTestChain({ settleTimeoutSeconds: 600 });
  const { driver } = chain;
  // 40 blocks of activity: placements every block, a few settlements (real proofs) and refunds.
  await driver.ensureCommitments(80);
  const placed: bigint[] = [];
  for (let block = 0; block < 40; block++) {
    for (let i = 0; i <= block % 3; i++) await driver.place(block + i);
    if (block % 10 === 5) await driver.settle(placed[block] as bigint);
    if (block === 39) await driver.refund(placed[3] as bigint); // after its deadline
    placed.push(...(await driver.mine(block === 39 ? 601 : 0)).placed);
  }
  head = await chain.pub.getBlockNumber();
  // Backfill only (confirmations 0), small ranges and commits: many transactions to interrupt.
  network = chain.network({ rpc: { http: chain.anvil.rpcUrl }, confirmations: 0, batchSize: 2 });
  const db = await database();
  await indexToHead(db);
  reference = await snapshotTables(db);
  expect(reference.bets.length).toBeGreaterThan(70);
  expect(reference.results).toHaveLength(4);
}, 120_000);

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await releaseProverResources();
  await chain?.stop();
});

it("resumes after a stop between batches", async () => {
  const db = await database();
  let commits = 0;
  let stopping: Promise<void> | undefined;
  const indexer = createIndexer({
    db,
    logger,
    networks: [network],
    maxEventsPerCommit: 3,
    onEvent: (e) => {
      if (e.type === "block" && ++commits === 5) stopping = indexer.stop();
    },
  });
  await indexer.start();
  await expect.poll(() => stopping !== undefined, { timeout: 20_000 }).toBe(true);
  await stopping;
  const stoppedAt = await cursorBlock(db);
  expect(stoppedAt).toBeGreaterThan(network.contracts.BetVault.deployBlock);
  expect(stoppedAt).toBeLessThan(head);

  await indexToHead(db);
  expect(await snapshotTables(db)).toEqual(reference);
});

it("resumes after a crash inside a write transaction (nothing of it is kept)", async () => {
  const db = await database();
  let commits = 0;
  const crashed = createIndexer({
    db,
    logger,
    networks: [network],
    maxEventsPerCommit: 3,
    hooks: {
      beforeCommit: () => {
        // The 7th transaction dies after writing its bets, results, block row, cursor: all rolled back.
        if (++commits === 7) throw new Error("simulated crash before COMMIT");
      },
    },
  });
  await crashed.start();
  await expect.poll(() => crashed.status()[0]?.failed?.code, { timeout: 20_000 }).toBe("UNEXPECTED");
  await crashed.stop();
  const crashedAt = await cursorBlock(db);
  expect(crashedAt).toBeLessThan(head);
  // Exactly the six committed transactions' worth of data is there, consistent with the cursor.
  const partial = await snapshotTables(db);
  const upTo = (rows: unknown[], field: string) => rows.filter((r) => BigInt((r as Record<string, string>)[field] ?? "0") <= crashedAt);
  expect(partial.bets.length).toBe(upTo(reference.bets, "placedBlock").length);

  await indexToHead(db);
  expect(await snapshotTables(db)).toEqual(reference);
});

it.skipIf(testConfig.TEST_DB !== "postgres")("resumes after bin/indexer.ts is killed with SIGKILL mid-backfill (PostgreSQL)", async () => {
  const db = await database();
  const dir = mkdtempSync(join(tmpdir(), "indexer-kill-"));
  try {
    const config = join(dir, "networks.json");
    writeFileSync(config, networksFileJson(network, { batchSize: 1 }));
    const child = spawnTypeScript("bin/indexer.ts", { env: { DATABASE_URL: db.url, NETWORKS_CONFIG: config, LOG_LEVEL: "warn" }, stdout: "ignore" });
    try {
      const start = network.contracts.BetVault.deployBlock + 10n;
      await expect.poll(() => cursorBlock(db), { timeout: 30_000, interval: 5 }).toBeGreaterThan(start);
    } finally {
      await child.stop({ signal: "SIGKILL" });
    }
    const killedAt = await cursorBlock(db);
    expect(killedAt, child.stderr()).toBeLessThan(head);

    await indexToHead(db);
    const after = await snapshotTables(db);
    expect(after.bets).toEqual(reference.bets);
    expect(after.results).toEqual(reference.results);
    // The killed process wrote with batchSize 1 (other commit boundaries, same heads): same updates.
    expect(after.updates).toEqual(reference.updates);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
