// A node whose head is behind the indexed block is not a reorg: the indexer waits for it (or for
// another of the network's RPC URLs) and rolls nothing back. Only a hash that differs at a block
// the node has is a reorg. The lagging node is a proxy in front of anvil (test/lagging-rpc.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { startLaggingRpc, type LaggingRpc } from "../test/lagging-rpc.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer, type IndexerEvent } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { eventually } from "../test/eventually.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
let chain: TestChain;
let proxy: LaggingRpc;
let db: TestDatabase;
let indexer: Indexer | undefined;
const events: IndexerEvent[] = [];

beforeAll(async () => {
  chain = await startTestChain();
  proxy = await startLaggingRpc(chain.anvil.rpcUrl);
  db = await createTestDatabase();
  await chain.driver.ensureCommitments(12);
});

afterAll(async () => {
  await indexer?.stop();
  await db?.close();
  await proxy?.close();
  await releaseProverResources();
  await chain?.stop();
});

async function updateTypes(): Promise<string[]> {
  const rows = await db.prisma.betUpdate.findMany({ select: { type: true } });
  return rows.map((r) => r.type);
}

async function placeBlocks(n: number, from: number): Promise<bigint[]> {
  const placed: bigint[] = [];
  for (let i = 0; i < n; i++) {
    await chain.driver.place((from + i) % 5);
    placed.push(...(await chain.driver.mine()).placed);
  }
  return placed;
}

describe("an RPC node behind the indexed head", () => {
  it("is waited for: no rollback, no REMOVED, and indexing resumes when it catches up", async () => {
    await placeBlocks(6, 0);
    indexer = createIndexer({
      db,
      logger,
      networks: [chain.network({ confirmations: 4, rpc: { http: proxy.url } })],
      onEvent: (e) => events.push(e),
    });
    await indexer.start();
    await indexer.synced();
    const indexed = indexer.status()[0]?.indexedBlock ?? null;
    const head = await chain.pub.getBlockNumber();
    expect(indexed).toBe(head);
    const before = await updateTypes();
    expect(before.filter((t) => t === "PLACED")).toHaveLength(6);

    // The node falls 3 blocks behind what is indexed (within the unfinalized range).
    proxy.lagTo(head - 3n);
    const seen = proxy.laggedHeads();
    await eventually(() => proxy.laggedHeads() >= seen + 10, 20_000, "the indexer to poll the lagging head");
    expect(indexer.status()[0]?.indexedBlock).toBe(head);
    expect(events.filter((e) => e.type === "reorg")).toEqual([]);
    expect(await updateTypes()).toEqual(before);

    // New blocks arrive while the node still lags; then it catches up.
    const later = await placeBlocks(2, 6);
    proxy.lagTo(null);
    await indexer.synced();
    expect(indexer.status()[0]?.indexedBlock).toBe(await chain.pub.getBlockNumber());
    const after = await updateTypes();
    expect(after.filter((t) => t === "REMOVED")).toEqual([]);
    expect(after.filter((t) => t === "PLACED")).toHaveLength(6 + later.length);
    expect(events.filter((e) => e.type === "reorg")).toEqual([]);
  });
});

describe("a shorter chain whose head differs from the indexed block at that height", () => {
  it("is a reorg: rolled back to the common ancestor", async () => {
    const live = indexer;
    if (!live) throw new Error("the first test did not start the indexer");
    await live.synced();
    const fork = await chain.pub.getBlockNumber();
    const snapshot = await chain.test.snapshot();
    const gone = await placeBlocks(3, 0);
    await live.synced();
    expect(live.status()[0]?.indexedBlock).toBe(fork + 3n);
    const reorgs = events.filter((e) => e.type === "reorg").length;

    await chain.test.revert({ id: snapshot });
    await placeBlocks(1, 3);
    expect(await chain.pub.getBlockNumber()).toBe(fork + 1n);
    await eventually(() => events.filter((e) => e.type === "reorg").length > reorgs, 20_000, "the reorg to be handled");
    await live.synced();
    const reorg = events.filter((e) => e.type === "reorg").at(-1);
    expect(reorg).toMatchObject({ ancestor: fork });
    const removed = await db.prisma.betUpdate.findMany({ where: { type: "REMOVED" }, select: { betId: true } });
    expect(removed.map((r) => BigInt(r.betId.toString())).sort()).toEqual([...gone].sort());
  });
});

describe("several RPC URLs", () => {
  it("a lagging fallback node, used once the first URL is gone, cannot lower the indexed head", async () => {
    const fresh = await createTestDatabase();
    const first = await startLaggingRpc(chain.anvil.rpcUrl);
    const lagging = await startLaggingRpc(chain.anvil.rpcUrl);
    const own: IndexerEvent[] = [];
    const other = createIndexer({
      db: fresh,
      logger,
      networks: [chain.network({ confirmations: 4, rpc: { http: first.url, fallback: [lagging.url] } })],
      onEvent: (e) => own.push(e),
    });
    const cursor = async () => fresh.prisma.indexingCursor.findFirstOrThrow({ select: { indexedBlock: true, headBlock: true } });
    try {
      await placeBlocks(2, 3);
      await other.start();
      await other.synced({ timeoutMs: 30_000 });
      const head = await chain.pub.getBlockNumber();
      expect(other.status()[0]?.indexedBlock).toBe(head);
      const before = await cursor();
      const removedBefore = await fresh.prisma.betUpdate.count({ where: { type: "REMOVED" } });

      // The fallback node is 3 blocks behind; then the first URL goes away: every request falls back.
      lagging.lagTo(head - 3n);
      await first.close();
      const seen = lagging.laggedHeads();
      await eventually(() => lagging.laggedHeads() >= seen + 10, 20_000, "the indexer to read the lagging fallback's head");
      expect(other.status()[0]?.indexedBlock).toBe(head);
      expect(await cursor()).toEqual(before);
      expect(own.filter((e) => e.type === "reorg")).toEqual([]);
      expect(await fresh.prisma.betUpdate.count({ where: { type: "REMOVED" } })).toBe(removedBefore);
    } finally {
      await other.stop();
      await first.close().catch(() => undefined);
      await lagging.close();
      await fresh.close();
    }
  });

  it("falls back to the next URL when the first does not answer", async () => {
    const fresh = await createTestDatabase();
    const other = createIndexer({
      db: fresh,
      logger,
      networks: [chain.network({ confirmations: 4, rpc: { http: "http://127.0.0.1:9", fallback: [chain.anvil.rpcUrl] } })],
    });
    try {
      await other.start();
      await other.synced({ timeoutMs: 30_000 });
      expect(other.status()[0]?.indexedBlock).toBe(await chain.pub.getBlockNumber());
      expect(await fresh.prisma.bet.count()).toBeGreaterThan(0);
    } finally {
      await other.stop();
      await fresh.close();
    }
  });
});
