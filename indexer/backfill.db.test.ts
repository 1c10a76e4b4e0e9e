// Backfill equals live indexing: the same chain indexed block by block as it is mined (WebSocket
// heads) and afterwards from scratch (batched getLogs ranges, then the unfinalized tail block by
// block) ends with identical Bet, BetResult and BetUpdate tables. Real anvil, real proofs.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer, type IndexerEvent } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { commitOrderViolations, snapshotTables } from "../test/tables.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
let chain: TestChain;
const dbs: TestDatabase[] = [];
const indexers: Indexer[] = [];

beforeAll(async () => {
  chain = await startTestChain({ settleTimeoutSeconds: 600 });
});

afterAll(async () => {
  await Promise.all(indexers.map((i) => i.stop()));
  await Promise.all(dbs.map((db) => db.close()));
  await releaseProverResources();
  await chain?.stop();
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
}

it("indexes a chain live and by backfill into identical tables", async () => {
  const { driver } = chain;
  const liveDb = await database();
  const liveEvents: IndexerEvent[] = [];
  const live = createIndexer({ db: liveDb, logger, networks: [chain.network()], onEvent: (e) => liveEvents.push(e) });
  indexers.push(live);
  await live.start();
  await live.synced();

  // Each mined block is indexed before the next one is mined.
  const mine = async (advanceSeconds = 0) => {
    const result = await driver.mine(advanceSeconds);
    await live.synced();
    return result;
  };
  await driver.ensureCommitments(12);
  for (let i = 0; i < 3; i++) await driver.place(i, { game: (["coinflip", "dice", "wheel"] as const)[i] });
  const a = await mine();
  expect(a.placed).toHaveLength(3);
  const [a0, a1, a2] = a.placed as [bigint, bigint, bigint];
  await driver.settle(a0);
  await driver.place(3, { game: "dice", stake: 3n * 10n ** 16n });
  await driver.place(4);
  const b = await mine();
  const [b0, b1] = b.placed as [bigint, bigint];
  await driver.mineEmpty(2);
  await live.synced();
  await driver.settle(b0);
  await driver.settle(a2);
  await mine();
  await driver.refund(a1); // after its deadline
  await driver.refund(b1);
  await mine(601);
  await driver.ensureCommitments(4);
  await driver.place(5);
  await driver.place(6, { game: "wheel" });
  const c = await mine();
  await driver.settle(c.placed[0] as bigint);
  await mine();
  await driver.mineEmpty(1);
  await live.synced();

  // Every state change went through follow mode, one block at a time.
  const blocks = liveEvents.filter((e) => e.type === "block");
  expect(blocks.some((e) => e.type === "block" && e.mode === "follow" && e.events > 0)).toBe(true);

  const backfillDb = await database();
  const backfillEvents: IndexerEvent[] = [];
  const backfill = createIndexer({
    db: backfillDb,
    logger,
    networks: [chain.network({ batchSize: 3, rpc: { http: chain.anvil.rpcUrl } })],
    maxEventsPerCommit: 2,
    onEvent: (e) => backfillEvents.push(e),
  });
  indexers.push(backfill);
  await backfill.start();
  await backfill.synced();
  expect(backfillEvents.some((e) => e.type === "block" && e.mode === "backfill" && e.events > 0)).toBe(true);

  const liveTables = await snapshotTables(liveDb, { withDepth: false });
  const backfillTables = await snapshotTables(backfillDb, { withDepth: false });
  expect(backfillTables).toEqual(liveTables);

  // What was indexed: 7 bets, 4 settled with verified proofs, 2 refunded, 1 pending; one update per change.
  const statuses = liveTables.bets.map((b) => (b as { status: string }).status).sort();
  expect(statuses).toEqual(["PENDING", "REFUNDED", "REFUNDED", "SETTLED", "SETTLED", "SETTLED", "SETTLED"]);
  const results = await liveDb.prisma.betResult.findMany();
  expect(results).toHaveLength(4);
  expect(results.every((r) => r.verified)).toBe(true);
  expect(liveTables.updates).toHaveLength(7 + 4 + 2);
  // seq order is commit order: the rows, by seq, are the indexer's commits, one after the other.
  expect(await commitOrderViolations(liveDb, liveEvents)).toEqual([]);
  expect(await commitOrderViolations(backfillDb, backfillEvents)).toEqual([]);

  // The cursor describes the chain's head and finality, and both indexers say they are ready.
  const head = await chain.pub.getBlockNumber();
  for (const db of [liveDb, backfillDb]) {
    const cursor = await db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: BigInt(chain.anvil.chainId) } });
    expect(cursor).toMatchObject({ indexedBlock: head, headBlock: head, finalizedBlock: head - 1n, isReady: true }); // 2 confirmations: head − 1 has them
    const network = await db.prisma.network.findUniqueOrThrow({ where: { chainId: BigInt(chain.anvil.chainId) }, include: { contracts: true } });
    expect(network.contracts.map((c) => c.name).sort()).toEqual(["BetVault", "Groth16Verifier"]);
    expect(network.verificationKeySha256).toMatch(/^0x[0-9a-f]{64}$/);
  }
});
