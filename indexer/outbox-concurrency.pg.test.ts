// PostgreSQL only (a `.pg.test.ts` file): PGlite serves one session, so its writers never overlap and
// this suite would pass there whatever the lock does.
//
// seq is strictly increasing in COMMIT order with several writers: a reader polling the outbox while
// two chains are indexed into one database and a third writer (the fixtures' and tests' path into
// the same core/outbox.ts) appends beside them (small transactions, random delays between the
// outbox insert and COMMIT) never sees a seq appear below one it already saw. Every writer goes
// through the one write path, so there is one lock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { appendBetUpdates } from "../core/outbox.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testUpdateRow, wallet } from "../test/outbox.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer } from "./indexer.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
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

const INDEXED_CHAINS = new Set([31337n, 31338n]);

describe("outbox commit order under concurrent sessions (PostgreSQL)", () => {
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
    let writing = true;
    const reader = (async () => {
      // Once every writer is done, one last poll after that reads whatever committed last.
      for (let last = false; !last; ) {
        last = done;
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
    // The other writer: one row per transaction, held open a little after the insert like the indexer's.
    let written = 0;
    const writer = (async () => {
      for (let betId = 1; writing; betId++) {
        await db.prisma.$transaction(async (tx) => {
          await appendBetUpdates(tx, [testUpdateRow({ chainId: 1, betId: String(betId), player: wallet(1) })]);
          await new Promise((r) => setTimeout(r, Math.random() * 4));
        });
        written++;
      }
    })();
    await indexer.start();
    await indexer.synced({ timeoutMs: 50_000 });
    writing = false;
    await writer;
    done = true;
    await reader;

    expect(seen.size).toBe(2 * BLOCKS * 2 + written);
    expect(written).toBeGreaterThan(10);
    expect(polls).toBeGreaterThan(10);
    expect(late).toEqual([]);
    // The writers really wrote side by side: both networks' updates and the other writer's interleave in seq order.
    const order = await db.prisma.betUpdate.findMany({ select: { chainId: true }, orderBy: { seq: "asc" } });
    const switches = (keep: (chainId: bigint) => boolean) => {
      const chains = order.map((u) => u.chainId).filter(keep);
      return chains.filter((c, i) => i > 0 && c !== chains[i - 1]).length;
    };
    expect(switches((c) => INDEXED_CHAINS.has(c))).toBeGreaterThan(5);
    expect(switches(() => true) - switches((c) => INDEXED_CHAINS.has(c))).toBeGreaterThan(5);
  });
});
