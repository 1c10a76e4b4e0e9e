// Reorgs of depth 1..5 on a live indexer: anvil snapshot → a branch of `depth` blocks (settlement,
// refund, placements) is indexed → revert → a different branch of depth + 1 blocks is mined. The
// database must then equal a fresh index of the new chain, with REMOVED updates for the bets that
// vanished and PLACED updates for the bets whose settlement/refund was undone; the fairness
// counters (and fairnessStats through a gateway over the same database) equal a recount and the
// fresh index's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { createLogger, silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import type { Database } from "../core/db.ts";
import { betCountDrift } from "../test/bet-counts.ts";
import { fairnessDrift } from "../test/fairness-counts.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer, type IndexerEvent } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { commitOrderViolations, lastUpdates, outboxSeqs, snapshotTables } from "../test/tables.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
const CONFIRMATIONS = 6;
let chain: TestChain;
let db: TestDatabase;
let live: Indexer;
let api: RunningStack;
const events: IndexerEvent[] = [];

beforeAll(async () => {
  chain = await startTestChain({ settleTimeoutSeconds: 600 });
  db = await createTestDatabase();
  live = createIndexer({ db, logger, networks: [chain.network({ confirmations: CONFIRMATIONS })], onEvent: (e) => events.push(e) });
  await live.start();
  await live.synced();
  api = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db, 0), production: false },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings(),
  });
});

afterAll(async () => {
  await api?.stop();
  await live?.stop();
  await db?.close();
  await releaseProverResources();
  await chain?.stop();
});

/** A fresh database indexed from scratch against the chain as it is now. */
async function freshIndex() {
  const fresh = await createTestDatabase();
  const indexer = createIndexer({ db: fresh, logger, networks: [chain.network({ confirmations: CONFIRMATIONS, rpc: { http: chain.anvil.rpcUrl } })] });
  try {
    await indexer.start();
    await indexer.synced();
    return { ...(await snapshotTables(fresh, { withDepth: false })), counters: await countersOf(fresh) };
  } finally {
    await indexer.stop();
    await fresh.close();
  }
}

/** The fairness counters that count something, as comparable text. */
async function countersOf(database: Database) {
  const rows = await database.prisma.fairnessCounter.findMany({ orderBy: [{ chainId: "asc" }, { game: "asc" }] });
  return rows
    .map((r) => ({
      chainId: Number(r.chainId),
      game: r.game,
      settledBets: String(r.settledBets),
      wonBets: String(r.wonBets),
      refundedBets: String(r.refundedBets),
      totalStake: r.totalStake.toFixed(0),
      totalPayout: r.totalPayout.toFixed(0),
      outcomeHistogram: r.outcomeHistogram.map(String),
    }))
    .filter((r) => r.settledBets !== "0" || r.refundedBets !== "0" || r.wonBets !== "0");
}

describe.each([1, 2, 3, 4, 5])("a reorg of depth %i", (depth) => {
  it("rolls back to the common ancestor and re-indexes to what a fresh index of the new chain holds", async () => {
    const { driver, test } = chain;
    // Bets the old branch will settle / refund, placed below the fork.
    await driver.ensureCommitments(3 + 2 * depth + 2);
    for (let i = 0; i < 3; i++) await driver.place(i);
    const setup = await driver.mine();
    const [toSettle, toRefund, settledInNewBranch] = setup.placed as [bigint, bigint, bigint];
    await live.synced();
    const fork = await chain.pub.getBlockNumber();
    const snapshot = await test.snapshot();
    const reorgsBefore = events.filter((e) => e.type === "reorg").length;

    // Old branch: `depth` blocks.
    const oldPlaced: bigint[] = [];
    await driver.settle(toSettle);
    await driver.place(3);
    oldPlaced.push(...(await driver.mine()).placed);
    if (depth >= 2) {
      await driver.refund(toRefund);
      await driver.place(4);
      oldPlaced.push(...(await driver.mine(601)).placed);
    }
    for (let b = 3; b <= depth; b++) {
      await driver.place(b);
      oldPlaced.push(...(await driver.mine()).placed);
    }
    await live.synced();
    expect(await chain.pub.getBlockNumber()).toBe(fork + BigInt(depth));
    const oldTables = await snapshotTables(db);
    const seqAfterOld = (await outboxSeqs(db)).at(-1) ?? 0n;
    expect(oldTables.bets.find((b) => (b as { betId: string }).betId === toSettle.toString())).toMatchObject({ status: "SETTLED" });

    // New branch: depth + 1 different blocks.
    await test.revert({ id: snapshot });
    expect(await chain.pub.getBlockNumber()).toBe(fork);
    await driver.settle(settledInNewBranch);
    await driver.place(7, { game: "dice" });
    const newPlaced = [...(await driver.mine()).placed];
    for (let b = 0; b < depth; b++) {
      if (b % 2 === 0) await driver.place(8, { game: "wheel" });
      newPlaced.push(...(await driver.mine()).placed);
    }
    await live.synced();

    const reorgs = events.filter((e) => e.type === "reorg").slice(reorgsBefore);
    expect(reorgs).toHaveLength(1);
    expect(reorgs[0]).toMatchObject({ type: "reorg", ancestor: fork, depth });

    // Bets and results equal a fresh index of the new chain.
    const mine = await snapshotTables(db, { withDepth: false });
    const fresh = await freshIndex();
    expect(mine.bets).toEqual(fresh.bets);
    expect(mine.results).toEqual(fresh.results);
    // The per-wallet counters (triggers on Bet) followed the rollback's deletions and reverts.
    expect(await betCountDrift(db)).toEqual([]);
    // The fairness counters (triggers on Bet and BetResult) too, and fairnessStats serves them.
    expect(await fairnessDrift(db)).toEqual([]);
    expect(await countersOf(db)).toEqual(fresh.counters);
    expect(fresh.counters.some((c) => c.settledBets !== "0")).toBe(true);
    const answer = await fetch(`${api.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `{ fairnessStats(chainId: ${chain.network().chainId}) { chainId game settledBets wonBets refundedBets totalStake totalPayout outcomeHistogram } }`,
      }),
    });
    const { data } = (await answer.json()) as { data: { fairnessStats: { settledBets: string; refundedBets: string; outcomeHistogram: string[] }[] } };
    const served = data.fairnessStats.filter((s) => s.settledBets !== "0" || s.refundedBets !== "0");
    expect(served).toEqual(fresh.counters);
    for (const s of data.fairnessStats) expect(s.outcomeHistogram.reduce((sum, n) => sum + BigInt(n), 0n)).toBe(BigInt(s.settledBets));

    // The outbox: every bet's latest update equals the fresh index's; bets gone for good end REMOVED.
    const mineLast = lastUpdates(mine);
    const freshLast = lastUpdates(fresh);
    for (const [key, update] of freshLast) expect(mineLast.get(key), key).toEqual(update);
    for (const [key, update] of mineLast) if (!freshLast.has(key)) expect((update as { type: string }).type, key).toBe("REMOVED");

    // What the rollback appended: REMOVED for every bet of the old branch, PLACED (back to PENDING)
    // for the bets below the fork whose settlement / refund was undone.
    const appended = await db.prisma.betUpdate.findMany({ where: { seq: { gt: seqAfterOld } }, orderBy: { seq: "asc" } });
    const id = (u: { betId: { toFixed(d: number): string } }) => BigInt(u.betId.toFixed(0));
    const removed = appended.filter((u) => u.type === "REMOVED").map(id);
    expect(removed.sort()).toEqual([...oldPlaced].sort());
    const reverted = appended.filter((u) => u.type === "PLACED" && u.blockNumber <= fork);
    expect(reverted.map(id).sort()).toEqual((depth >= 2 ? [toSettle, toRefund] : [toSettle]).sort());
    for (const u of reverted) expect(u.bet).toMatchObject({ status: "PENDING", result: null, settledBlock: null, refundedBlock: null });
    // ... and they come before the new branch's updates.
    const firstNew = appended.findIndex((u) => u.type !== "REMOVED" && u.blockNumber > fork);
    expect(appended.slice(0, firstNew).every((u) => u.type === "REMOVED" || u.blockNumber <= fork)).toBe(true);
    expect(firstNew).toBe(removed.length + reverted.length);
    expect(oldPlaced.length).toBeGreaterThan(0);
    expect(newPlaced.length).toBeGreaterThan(0);

    // Through the rollback, seq order is commit order: old branch, rollback, new branch, commit by commit.
    expect(await commitOrderViolations(db, events)).toEqual([]);
  });
});
