// A database indexed from one deployment, restarted against another (a new dev chain, a new
// BetVault address): refused with DeploymentChangedError, or — with resetOnChainMismatch, as
// `npm start` configures its throwaway anvil — wiped (a REMOVED update per old bet) and re-indexed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { snapshotTables } from "../test/tables.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
let first: TestChain;
let second: TestChain;
let db: TestDatabase;

beforeAll(async () => {
  first = await startTestChain();
  await first.driver.ensureCommitments(3);
  for (let i = 0; i < 3; i++) await first.driver.place(i);
  await first.driver.mine();
  // The second chain's deployment comes from another account: other addresses.
  second = await startTestChain({ permissive: true, operatorKey: DEV_PRIVATE_KEYS[9] });
  await second.driver.ensureCommitments(2);
  for (let i = 0; i < 2; i++) await second.driver.place(i, { game: "wheel" });
  await second.driver.mine();
  expect(second.sys.betVault).not.toBe(first.sys.betVault);

  db = await createTestDatabase();
  const indexer = createIndexer({ db, logger, networks: [first.network()] });
  await indexer.start();
  await indexer.synced();
  await indexer.stop();
});

afterAll(async () => {
  await db?.close();
  await releaseProverResources();
  await first?.stop();
  await second?.stop();
});

it("refuses to index another deployment into the same network's rows", async () => {
  const before = await snapshotTables(db);
  const indexer = createIndexer({ db, logger, networks: [second.network({ name: first.network().name })] });
  try {
    await expect(indexer.start()).rejects.toMatchObject({ name: "DeploymentChangedError", retryable: false });
  } finally {
    await indexer.stop();
  }
  expect(await snapshotTables(db)).toEqual(before);
});

it("with resetOnChainMismatch, replaces the old deployment's rows by the new one's", async () => {
  const indexer = createIndexer({ db, logger, networks: [second.network({ name: first.network().name, resetOnChainMismatch: true })] });
  try {
    await indexer.start();
    await indexer.synced();
  } finally {
    await indexer.stop();
  }
  const after = await snapshotTables(db, { withDepth: false });
  expect(after.bets.map((b) => (b as { game: string }).game)).toEqual(["wheel", "wheel"]);
  expect(after.updates.map((u) => (u as { type: string }).type)).toEqual(["PLACED", "PLACED", "PLACED", "REMOVED", "REMOVED", "REMOVED", "PLACED", "PLACED"]);
  const contracts = await db.prisma.contract.findMany({ orderBy: { name: "asc" } });
  expect(contracts.map((c) => c.address)).toEqual([second.sys.betVault.toLowerCase(), second.sys.verifier.toLowerCase()]);
  const cursor = await db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } });
  expect(cursor.indexedBlock).toBe(await second.pub.getBlockNumber());
});
