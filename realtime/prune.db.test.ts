// Outbox pruning by the active publisher. The oracle is the replay window itself
// (`Outbox.checkWindow`, which decides REPLAY_WINDOW_EXCEEDED): a row is deleted only when neither
// bound alone would let any resume be served from it, and every resume served before a prune is
// served after it with the very same rows — sequence gaps and out-of-order createdAt included.
// Old rows are written old (the outbox's write path takes a `createdAt`), since nothing but
// core/outbox.ts writes the table.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import type { SubscribedPayload } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createLocalLock } from "./lock.ts";
import { createPublisherMetrics } from "./metrics.ts";
import { Outbox, type Retention } from "../core/outbox.ts";
import { createPublisher, type Publisher } from "./publisher.ts";
import { createRealtime, type Realtime } from "./server.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, seqs, type TestClient } from "../test/realtime.ts";

const A = wallet(1);
const B = wallet(2);
const HOUR = 3_600_000;
const RETENTION: Retention = { maxUpdates: 20, maxAgeMs: HOUR };

let db: TestDatabase;
let outbox: Outbox;
let nextBetId = 1;

beforeAll(async () => {
  db = await createTestDatabase();
  await createNetworks(db, [1]);
  outbox = new Outbox(db);
});
afterAll(async () => {
  await db?.close();
});

/** Writes `count` rows, those for which `old(i)` holds two hours old. */
async function write(count: number, old: (i: number) => boolean = () => false): Promise<bigint[]> {
  const twoHoursAgo = new Date(Date.now() - 2 * HOUR);
  return insertUpdates(
    db,
    Array.from({ length: count }, (_, i) => ({
      chainId: 1,
      betId: String(nextBetId++),
      player: i % 2 === 0 ? A : B,
      ...(old(i) ? { createdAt: twoHoursAgo } : {}),
    })),
  );
}

/** A seq the sequence hands out and no row ever gets (a rolled-back writer): a gap. */
async function skipSeq(): Promise<void> {
  await db.prisma.$queryRawUnsafe(`SELECT nextval(pg_get_serial_sequence('"BetUpdate"', 'seq'))::text`);
}

async function storedSeqs(): Promise<bigint[]> {
  return (await db.prisma.betUpdate.findMany({ select: { seq: true }, orderBy: { seq: "asc" } })).map((row) => row.seq);
}

describe("Outbox.prune against the replay window", () => {
  // `old(i)`: whether the i-th of the 59 rows is two hours old.
  const scenarios: { name: string; retention: Retention; old: (i: number) => boolean; deletes: boolean }[] = [
    { name: "old rows still within the count are kept (the count binds)", retention: RETENTION, old: (i) => i < 45, deletes: true },
    {
      name: "a young row beyond the count protects it and everything after (the age binds)",
      retention: RETENTION,
      old: (i) => i < 45 && i !== 12,
      deletes: true,
    },
    { name: "every row old: the count alone decides", retention: RETENTION, old: () => true, deletes: true },
    { name: "both bounds meet at a row followed by a gap in the sequence: that row stays", retention: RETENTION, old: (i) => i < 40, deletes: true },
    { name: "no age limit: nothing is ever pruned", retention: { maxUpdates: 20, maxAgeMs: 0 }, old: () => true, deletes: false },
    { name: "no count limit: nothing is ever pruned", retention: { maxUpdates: 0, maxAgeMs: HOUR }, old: () => true, deletes: false },
  ];

  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      await outbox.clear();
      // 59 rows, two gaps in the sequence: the second right after the count's boundary (rows[39], 20 behind the newest).
      const rows = [...(await write(20, (i) => scenario.old(i)))];
      await skipSeq();
      rows.push(...(await write(20, (i) => scenario.old(20 + i))));
      await skipSeq();
      rows.push(...(await write(19, (i) => scenario.old(40 + i))));
      const now = Date.now();
      const head = rows.at(-1)!;

      const served = async (since: bigint, retention: Retention) => (await outbox.checkWindow(since, retention, now)).ok;
      const replay = async (since: bigint) => (await outbox.after(since, { limit: 1_000 })).map((update) => BigInt(update.seq));
      const sinces = Array.from({ length: Number(head) + 2 }, (_, i) => BigInt(i));
      const before = new Map<bigint, bigint[] | null>();
      for (const since of sinces) before.set(since, (await served(since, scenario.retention)) ? await replay(since) : null);

      // The oracle: the oldest resume either bound alone would serve; rows above it stay, and so
      // does the newest row at or below it + 1 (checkWindow refuses a resume from below oldest − 1).
      let expected = rows;
      const { maxUpdates, maxAgeMs } = scenario.retention;
      if (maxUpdates > 0 && maxAgeMs > 0) {
        let floor: bigint | undefined;
        for (const since of sinces) {
          if ((await served(since, { maxUpdates, maxAgeMs: 0 })) || (await served(since, { maxUpdates: 0, maxAgeMs }))) {
            floor = since;
            break;
          }
        }
        const kept = rows.findLast((seq) => seq <= floor! + 1n);
        if (kept !== undefined) expected = rows.filter((seq) => seq >= kept);
      }

      let total = 0;
      for (;;) {
        const batch = await outbox.prune(scenario.retention, { batchSize: 7, now });
        expect(batch).toBeLessThanOrEqual(7);
        total += batch;
        if (batch < 7) break;
      }
      expect(await storedSeqs()).toEqual(expected);
      expect(total).toBe(rows.length - expected.length);
      expect(total > 0).toBe(scenario.deletes);

      for (const since of sinces) {
        const previously = before.get(since)!;
        const after = (await served(since, scenario.retention)) ? await replay(since) : null;
        // A resume served before is served after, with the same rows; one refused stays refused.
        expect(after, `sinceSeq ${since}`).toEqual(previously);
      }
    });
  }

  it("keeps the rows above `keepAbove` (not yet published) whatever their age", async () => {
    await outbox.clear();
    const rows = await write(40, () => true);
    await outbox.prune(RETENTION, { batchSize: 1_000, keepAbove: rows[5]! });
    expect(await storedSeqs()).toEqual(rows.slice(6));
  });
});

describe("the active publisher prunes the outbox; resumes around the boundary", () => {
  let server: http.Server;
  let realtime: Realtime;
  let publisher: Publisher;
  let client: TestClient;

  beforeAll(async () => {
    await outbox.clear();
    const logger = silentLogger();
    const fanout = createMemoryFanout();
    server = http.createServer();
    realtime = await createRealtime(server, { db, logger, fanout, retention: RETENTION });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    publisher = createPublisher({
      db,
      fanout,
      logger,
      lock: createLocalLock(),
      pollIntervalMs: 100,
      heartbeatMs: 200,
      prune: { intervalMs: 100, batchSize: 7, retention: RETENTION },
    });
    client = await connectClient(`http://127.0.0.1:${(server.address() as { port: number }).port}`, "/ws");
  });
  afterAll(async () => {
    client?.close();
    await publisher?.stop();
    await realtime?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("deletes the rows beyond the window in batches; a resume at its edge replays without gap, one past it is refused", async () => {
    // rows[39] is 20 behind the newest and followed by a gap in the sequence. The 39 oldest are
    // beyond both bounds: more than 20 behind the newest, and two hours old.
    const rows = await write(40, () => true);
    await skipSeq();
    rows.push(...(await write(19)));
    publisher.start();
    await eventually(async () => (await outbox.oldest()) === rows[39], 10_000, "the publisher to prune the 39 oldest rows");
    expect(await storedSeqs()).toEqual(rows.slice(39));
    expect(publisher.pruned()).toBe(39);
    const metrics = createPublisherMetrics(publisher, { connected: () => true }, outbox, { defaultMetrics: false });
    expect((await metrics.registry.getSingleMetric("publisher_outbox_rows_pruned_total")!.get()).values[0]!.value).toBe(39);

    // The oldest resume still inside the window: 20 behind the newest, its first missed row young.
    const edge = rows[39]!;
    const state = await client.subscribe({ wallets: [A], sinceSeq: edge.toString() });
    expect("error" in state).toBe(false);
    const _live = await write(4);
    const expected = (await db.prisma.betUpdate.findMany({ where: { player: A, seq: { gt: edge } }, orderBy: { seq: "asc" } })).map((row) => row.seq);
    expect(expected.length).toBe(12); // 10 replayed, 2 live
    await client.until(() => client.updates.length >= expected.length, 10_000, "the replay and the live updates");
    expect(seqs(client.updates)).toEqual(expected);
    expect(BigInt((state as SubscribedPayload).seq)).toBeGreaterThanOrEqual(rows.at(-1)!);

    // One further back is beyond the window (and its rows are gone).
    const beyond = await client.subscribe({ wallets: [A], sinceSeq: rows[38]!.toString() });
    expect(beyond).toMatchObject({ error: { code: "REPLAY_WINDOW_EXCEEDED" } });
  });
});
