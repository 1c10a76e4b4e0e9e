// `confirmations` / `finalized` in `bets:update` are counted at delivery (docs/reference/realtime.md):
// an update committed when its change had 1 confirmation says final when replayed after the head
// reached the network's confirmations (the boundary block), and a live update reflects the head too.
import http from "node:http";
import { afterEach, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { createNetworks, fakeBet, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, type TestClient } from "../test/realtime.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createLocalLock } from "./lock.ts";
import { createPublisher } from "./publisher.ts";
import { createRealtime } from "./server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const A = wallet(1);

async function setHead(db: TestDatabase, head: bigint): Promise<void> {
  const state = { indexedBlock: head, indexedBlockHash: `0x${"1".repeat(64)}`, headBlock: head, finalizedBlock: 0n, isReady: true, updatedAt: new Date() };
  await db.prisma.indexingCursor.upsert({ where: { chainId: 1n }, create: { chainId: 1n, ...state }, update: state });
}

async function start(): Promise<{ db: TestDatabase; client: () => Promise<TestClient> }> {
  const logger = silentLogger();
  const db = await createTestDatabase();
  cleanups.push(() => db.close());
  await createNetworks(db, [1]); // confirmations: 2
  const fanout = createMemoryFanout();
  const server = http.createServer();
  const realtime = await createRealtime(server, { db, logger, fanout, networks: new NetworkDirectory(db, 0) });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const publisher = createPublisher({ db, fanout, logger, lock: createLocalLock(), pollIntervalMs: 100, heartbeatMs: 200 });
  publisher.start();
  cleanups.push(
    async () => {
      await realtime.close();
      await new Promise((resolve) => server.close(resolve));
    },
    () => publisher.stop(),
    () => fanout.close(),
  );
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    db,
    client: async () => {
      const client = await connectClient(url, "/ws");
      cleanups.push(async () => client.close());
      return client;
    },
  };
}

it("replays an update committed at 1 confirmation with the head's current depth: final at the boundary block", async () => {
  const { db, client } = await start();
  // fakeBet: settled in block 101, stored as committed with the head at 101 (1 confirmation, not final).
  await setHead(db, 101n);
  const [seq] = await insertUpdates(db, [{ chainId: 1, betId: "5", player: A, type: "SETTLED" }]);
  expect(fakeBet({ chainId: 1, betId: "5", player: A, type: "SETTLED" })).toMatchObject({ settledBlock: "101", confirmations: "1", finalized: false });

  await setHead(db, 102n); // 2 confirmations: the network's depth
  const late = await client();
  await late.subscribe({ all: true, sinceSeq: String(seq! - 1n) });
  await late.until(() => late.updates.length === 1, 10_000, "the replayed update");
  expect(late.updates[0]!.bet).toMatchObject({ status: "SETTLED", confirmations: "2", finalized: true });

  await setHead(db, 150n);
  const later = await client();
  await later.subscribe({ all: true, sinceSeq: String(seq! - 1n) });
  await later.until(() => later.updates.length === 1, 10_000, "the replayed update");
  expect(later.updates[0]!.bet).toMatchObject({ confirmations: "50", finalized: true });
});

it("delivers a live update with the depth at the head when it is sent, never less than at commit", async () => {
  const { db, client } = await start();
  await setHead(db, 110n);
  const live = await client();
  await live.subscribe({ all: true });
  // Stored as committed at head 101 (1 confirmation); the head is at 110 by delivery.
  await insertUpdates(db, [{ chainId: 1, betId: "6", player: A, type: "SETTLED" }]);
  await live.until(() => live.updates.length === 1, 10_000, "the live update");
  expect(live.updates[0]!.bet).toMatchObject({ confirmations: "10", finalized: true });

  // A head read before the commit (lower than the commit's own) never lowers the stored depth.
  await setHead(db, 90n);
  await insertUpdates(db, [{ chainId: 1, betId: "7", player: A, type: "PLACED" }]);
  await live.until(() => live.updates.length === 2, 10_000, "the second live update");
  expect(live.updates[1]!.bet).toMatchObject({ placedBlock: "100", confirmations: "1", finalized: false });
});
