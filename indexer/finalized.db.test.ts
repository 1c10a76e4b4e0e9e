// FINALIZED on a real chain: a firehose subscriber sees one FINALIZED update when the head makes a
// settlement final (confirmations = head − block + 1 reaching the network's), exactly once — more
// blocks and an indexer restart add none — and a `sinceSeq` resume replays it. A settlement that a
// reorg rolls back before finality is never announced; its settlement on the new branch is. A
// settlement already final when the indexer first reads it is written FINALIZED with its row, once.
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { REALTIME_PATH, type BetUpdatePayload } from "../realtime/events.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { testConfig, testRealtimeSettings } from "../test/config.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { connectClient, type TestClient } from "../test/realtime.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import type { NetworkConfig } from "./config.ts";
import { createIndexer, type Indexer } from "./indexer.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
const CONFIRMATIONS = 3;
let chain: TestChain;
let network: NetworkConfig;
let db: TestDatabase;
let indexer: Indexer;
let realtime: RunningRealtime;
let server: http.Server;
let url: string;
let firehose: TestClient;
const cleanups: (() => Promise<void>)[] = [];

async function startIndexer(): Promise<Indexer> {
  const started = createIndexer({ db, logger, networks: [network] });
  await started.start();
  await started.synced();
  return started;
}

beforeAll(async () => {
  chain = await startTestChain();
  cleanups.push(() => chain.stop());
  network = chain.network({ confirmations: CONFIRMATIONS });
  db = await createTestDatabase();
  cleanups.push(() => db.close());
  await chain.driver.ensureCommitments(4);
  indexer = await startIndexer();
  server = http.createServer((_req, res) => res.writeHead(404).end());
  realtime = await startRealtime(server, {
    db,
    logger,
    settings: testRealtimeSettings({ REALTIME_POLL_INTERVAL_MS: "100" }, { path: REALTIME_PATH.gateway }),
  });
  cleanups.push(() => realtime.stop());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  firehose = await connectClient(url, REALTIME_PATH.gateway);
  cleanups.push(async () => firehose.close());
  await firehose.subscribe({ all: true });
}, 120_000);

afterAll(async () => {
  await indexer?.stop();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await releaseProverResources();
});

const of = (updates: BetUpdatePayload[], betId: bigint, type?: string) =>
  updates.filter((u) => u.betId === betId.toString() && (type === undefined || u.type === type));

/** Mines `blocks` empty blocks and waits until the indexer has indexed them. */
async function mine(blocks: number): Promise<void> {
  await chain.driver.mineEmpty(blocks);
  await indexer.synced();
}

it("sends FINALIZED once when the settlement reaches the network's confirmations, and replays it", async () => {
  const { driver } = chain;
  await driver.place(1);
  const [betId] = (await driver.mine()).placed;
  if (betId === undefined) throw new Error("no bet placed");
  await driver.settle(betId);
  const settledBlock = (await driver.mine()).block;
  await indexer.synced();
  await firehose.until(() => of(firehose.updates, betId, "SETTLED").length === 1, 15_000, "SETTLED");

  // Head = settledBlock + 1: 2 confirmations of 3, not final. Head + 1 more: final.
  await mine(1);
  const notYet = await db.prisma.betUpdate.count({ where: { type: "FINALIZED" } });
  expect(notYet).toBe(0);
  await mine(1);
  await firehose.until(() => of(firehose.updates, betId, "FINALIZED").length === 1, 15_000, "FINALIZED");
  const [finalized] = of(firehose.updates, betId, "FINALIZED");
  expect(finalized?.bet).toMatchObject({ status: "SETTLED", settledBlock: settledBlock.toString(), finalized: true, confirmations: String(CONFIRMATIONS) });
  expect(finalized?.bet.result).not.toBeNull();
  // In seq order after the SETTLED update.
  const [settled] = of(firehose.updates, betId, "SETTLED");
  expect(BigInt(finalized!.seq)).toBeGreaterThan(BigInt(settled!.seq));

  // More blocks, then a restart of the indexer and more blocks again: no second FINALIZED.
  await mine(3);
  await indexer.stop();
  indexer = await startIndexer();
  await mine(3);
  // The node has delivered everything up to the outbox's head before we count.
  const head = await db.prisma.betUpdate.aggregate({ _max: { seq: true } });
  await firehose.until(() => firehose.updates.some((u) => BigInt(u.seq) >= (head._max.seq ?? 0n)), 15_000, "the outbox head");
  expect(of(firehose.updates, betId, "FINALIZED")).toHaveLength(1);
  expect(await db.prisma.betUpdate.count({ where: { type: "FINALIZED", betId: betId.toString() } })).toBe(1);

  // A resume from before the settlement replays SETTLED then FINALIZED, once each.
  const resumed = await connectClient(url, REALTIME_PATH.gateway);
  cleanups.push(async () => resumed.close());
  await resumed.subscribe({ all: true, sinceSeq: String(BigInt(settled!.seq) - 1n) });
  await resumed.until(() => of(resumed.updates, betId, "FINALIZED").length === 1, 15_000, "replayed FINALIZED");
  expect(of(resumed.updates, betId).map((u) => u.type)).toEqual(["SETTLED", "FINALIZED"]);
  expect(of(resumed.updates, betId, "FINALIZED")[0]).toMatchObject({ seq: finalized!.seq, bet: { finalized: true } });
}, 120_000);

it("never announces a settlement a reorg rolls back before finality; announces the new branch's once", async () => {
  const { driver, test } = chain;
  await driver.place(2);
  const [betId] = (await driver.mine()).placed;
  if (betId === undefined) throw new Error("no bet placed");
  await indexer.synced();
  const fork = await test.snapshot();
  await driver.settle(betId);
  await driver.mine();
  await indexer.synced();
  await firehose.until(() => of(firehose.updates, betId, "SETTLED").length === 1, 15_000, "SETTLED");

  // The settlement's block is replaced (1 deep, above finality) by a longer branch without it.
  await test.revert({ id: fork });
  await driver.mineEmpty(2);
  await indexer.synced();
  await firehose.until(() => of(firehose.updates, betId, "PLACED").length === 2, 15_000, "the rollback's PLACED");
  await mine(CONFIRMATIONS + 2);
  expect(await db.prisma.betUpdate.count({ where: { type: "FINALIZED", betId: betId.toString() } })).toBe(0);

  // Settled on the new branch: announced once it is final.
  await driver.settle(betId);
  await driver.mine();
  await mine(CONFIRMATIONS + 2);
  await firehose.until(() => of(firehose.updates, betId, "FINALIZED").length === 1, 15_000, "FINALIZED");
  expect(of(firehose.updates, betId).map((u) => u.type)).toEqual(["PLACED", "SETTLED", "PLACED", "SETTLED", "FINALIZED"]);
  expect(await db.prisma.betUpdate.count({ where: { type: "FINALIZED", betId: betId.toString() } })).toBe(1);
}, 120_000);

it("writes FINALIZED with the row, once, for a settlement already final when the indexer first reads it (a catch-up or a backfill)", async () => {
  const { driver } = chain;
  // The indexer is away while a bet is placed, settled and buried under more than its confirmations.
  await indexer.stop();
  await driver.place(3);
  const [betId] = (await driver.mine()).placed;
  if (betId === undefined) throw new Error("no bet placed");
  await driver.settle(betId);
  const settledBlock = (await driver.mine()).block;
  await driver.mineEmpty(CONFIRMATIONS + 2);
  indexer = await startIndexer();

  const rowsOf = async () => db.prisma.betUpdate.findMany({ where: { betId: betId.toString() }, orderBy: { seq: "asc" }, select: { seq: true, type: true } });
  expect((await rowsOf()).map((row) => row.type)).toEqual(["PLACED", "SETTLED", "FINALIZED"]);
  const bet = await db.prisma.bet.findUniqueOrThrow({ where: { chainId_betId: { chainId: network.chainId, betId: betId.toString() } } });
  expect(bet.finalizedUpdateBlock).toBe(settledBlock);
  await firehose.until(() => of(firehose.updates, betId, "FINALIZED").length === 1, 15_000, "FINALIZED");
  expect(of(firehose.updates, betId, "FINALIZED")[0]?.bet).toMatchObject({ status: "SETTLED", finalized: true });

  // A head advance and a restart claim nothing again.
  await mine(2);
  await indexer.stop();
  indexer = await startIndexer();
  await mine(2);
  expect((await rowsOf()).map((row) => row.type)).toEqual(["PLACED", "SETTLED", "FINALIZED"]);
}, 120_000);
