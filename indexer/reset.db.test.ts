// A network reset (IndexerStore.reset: a new deployment, a new verification key, a dev chain that
// restarted) appends one REMOVED update per bet of the network, then forgets its bets, results,
// block rows and tokens and moves the cursor back to `start`, in one transaction.
//
// The updates are what betUpdateRow writes for each bet with its result (core/outbox.ts), newest
// placement first: compared here byte for byte (the stored jsonb's text) on fixture bets in every
// state, with real proofs. And a network holding more bets than a statement may carry bind
// parameters (32 767; issue 21: the bets were read into memory with `include: result`, whose second
// query passed one parameter per bet, so a reset of ~1 M bets never completed and the server never
// came up) is reset too, on PostgreSQL.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NetworkEntry } from "../core/networks.ts";
import { betUpdateRow, type BetUpdateRow } from "../core/outbox.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import type { PrismaClient } from "../prisma/generated/client.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testConfig } from "../test/config.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { IndexerStore } from "./store.ts";

const NATIVE = "0x0000000000000000000000000000000000000000";
const OTHER_TOKEN = "0x00000000000000000000000000000000000000cc";

let db: TestDatabase | undefined;

afterEach(async () => {
  await db?.close();
  db = undefined;
});

afterAll(async () => {
  await releaseProverResources();
});

/** What a reset of `chainId` appends, as the indexer has always built it: betUpdateRow per bet with its result, newest placement first. */
async function expectedRemovedRows(
  prisma: PrismaClient,
  chainId: bigint,
  network: NetworkEntry,
  where: { betId?: { in: string[] } } = {},
): Promise<BetUpdateRow[]> {
  const bets = await prisma.bet.findMany({ where: { chainId, ...where }, orderBy: [{ placedBlock: "desc" }, { placedLogIndex: "desc" }] });
  const results = await prisma.betResult.findMany({ where: { chainId, ...where } });
  const resultOf = new Map(results.map((r) => [r.betId.toFixed(0), r]));
  return bets.map((bet) =>
    betUpdateRow("REMOVED", bet, resultOf.get(bet.betId.toFixed(0)) ?? null, { number: bet.placedBlock, hash: bet.placedBlockHash }, network),
  );
}

type StoredRow = {
  chainId: bigint;
  betId: string;
  type: string;
  player: string;
  blockNumber: bigint;
  blockHash: string;
  bet: string;
  traceparent: string | null;
};

/** The outbox rows of `chainId` after `afterSeq`, in seq order, their payload as the stored jsonb's text. */
async function storedRows(prisma: PrismaClient, chainId: bigint, afterSeq: bigint): Promise<StoredRow[]> {
  return prisma.$queryRaw<StoredRow[]>`
    SELECT "chainId", "betId"::text AS "betId", "type"::text AS "type", player, "blockNumber", "blockHash", bet::text AS bet, traceparent
    FROM "BetUpdate" WHERE "chainId" = ${chainId} AND seq > ${afterSeq} ORDER BY seq`;
}

/** `rows` as stored: each payload through jsonb, so its text is what the table would hold. */
async function asStored(prisma: PrismaClient, rows: readonly BetUpdateRow[]): Promise<StoredRow[]> {
  const [canonical] = await prisma.$queryRaw<{ bets: string[] }[]>`
    SELECT ARRAY(SELECT e::text FROM jsonb_array_elements(${JSON.stringify(rows.map((r) => r.bet))}::jsonb) WITH ORDINALITY AS a(e, i) ORDER BY i) AS bets`;
  return rows.map((r, i) => ({
    chainId: r.chainId,
    betId: typeof r.betId === "string" ? r.betId : r.betId.toFixed(0),
    type: r.type,
    player: r.player,
    blockNumber: r.blockNumber,
    blockHash: r.blockHash,
    bet: canonical!.bets[i]!,
    traceparent: null,
  }));
}

async function lastSeq(prisma: PrismaClient): Promise<bigint> {
  const [row] = await prisma.$queryRaw<{ max: bigint | null }[]>`SELECT max(seq) AS max FROM "BetUpdate"`;
  return row?.max ?? 0n;
}

async function leftOf(prisma: PrismaClient, chainId: bigint) {
  return {
    bets: await prisma.bet.count({ where: { chainId } }),
    results: await prisma.betResult.count({ where: { chainId } }),
    blocks: await prisma.indexedBlock.count({ where: { chainId } }),
    tokens: (await prisma.token.findMany({ where: { chainId }, select: { address: true } })).map((t) => t.address),
  };
}

describe("IndexerStore.reset", () => {
  beforeEach(async () => {
    db = await createTestDatabase();
  });

  it("appends for every bet the REMOVED row betUpdateRow builds (settled with proofs, refunded, pending), newest placement first, and forgets the network", async () => {
    const prisma = db!.prisma;
    await seedFixtures(db!, { bets: 160, provenLimit: 12, proofCache: readProofCache(), outbox: false });
    const chainId = 31337n;
    const other = 1337n;
    await prisma.token.create({ data: { chainId, address: OTHER_TOKEN, symbol: "TKN", decimals: 6 } });
    await prisma.indexedBlock.createMany({ data: [1n, 2n, 3n].map((number) => ({ chainId, number, hash: `0x${number}` })) });
    const cursorBefore = await prisma.indexingCursor.findUniqueOrThrow({ where: { chainId } });
    // A head inside the bets' blocks: some payloads say final, some not, some 0 confirmations.
    const head = cursorBefore.headBlock / 2n;
    const network: NetworkEntry = { chainId: 31337, name: "localnet", confirmations: 2, headBlock: head, finalizedBlock: head - 1n };
    const statuses = await prisma.bet.groupBy({ by: ["status"], where: { chainId }, _count: true });
    expect(statuses.map((s) => s.status).sort()).toEqual(["PENDING", "REFUNDED", "SETTLED"]);
    expect(await prisma.betResult.count({ where: { chainId, verified: true } })).toBeGreaterThan(0);

    const expected = await asStored(prisma, await expectedRemovedRows(prisma, chainId, network));
    const otherBefore = await leftOf(prisma, other);
    const since = await lastSeq(prisma);
    const removed = await new IndexerStore(db!).reset(31337, 5n, network);

    expect(removed).toBe(expected.length);
    const stored = await storedRows(prisma, chainId, since);
    expect(stored).toEqual(expected);
    expect(stored.some((row) => row.bet.includes('"finalized": true'))).toBe(true);
    expect(stored.some((row) => row.bet.includes('"piA"'))).toBe(true);
    expect(await storedRows(prisma, other, since)).toEqual([]);

    expect(await leftOf(prisma, chainId)).toEqual({ bets: 0, results: 0, blocks: 0, tokens: [NATIVE] });
    expect(await leftOf(prisma, other)).toEqual(otherBefore);
    const cursor = await prisma.indexingCursor.findUniqueOrThrow({ where: { chainId } });
    expect(cursor).toMatchObject({ indexedBlock: 5n, indexedBlockHash: "", isReady: false, resets: cursorBefore.resets + 1, rejectedProofs: 0 });
  });

  it("of a network without bets appends nothing and still moves the cursor back", async () => {
    const prisma = db!.prisma;
    await seedFixtures(db!, { bets: 0, proofCache: readProofCache(), outbox: false });
    const since = await lastSeq(prisma);
    const network: NetworkEntry = { chainId: 31337, name: "localnet", confirmations: 2, headBlock: null, finalizedBlock: null };
    expect(await new IndexerStore(db!).reset(31337, 0n, network)).toBe(0);
    expect(await lastSeq(prisma)).toBe(since);
    expect(await prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } })).toMatchObject({ indexedBlock: 0n, indexedBlockHash: "" });
  });
});

// PostgreSQL: the bets are written set-wise in a few statements (PGlite would take minutes).
describe.runIf(testConfig.TEST_DB === "postgres")("IndexerStore.reset of a network with more bets than a statement's bind parameters (PostgreSQL)", () => {
  const BETS = 40_000;
  /** The newest bet's block (i / 3 for bet i). */
  const HEAD = 13_333n;
  const chainId = 31337n;

  beforeEach(async () => {
    db = await createTestDatabase();
  });

  it("completes: one REMOVED row per bet, newest placement first, and nothing of the network left", async () => {
    const prisma = db!.prisma;
    const [, proof] = [...readProofCache()][0]!;
    await prisma.$executeRaw`
      INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (${chainId}, 'localnet', 2, '{}', '00')`;
    await prisma.$executeRaw`
      INSERT INTO "IndexingCursor" ("chainId", "indexedBlock", "indexedBlockHash", "headBlock", "finalizedBlock", "isReady", "updatedAt")
      VALUES (${chainId}, ${BigInt(BETS)}, '0xhead', ${BigInt(BETS)}, ${BigInt(BETS - 1)}, true, now())`;
    // Three bets a block (placedLogIndex 0..2): newest placement first is betId descending. Every
    // fifth bet settled with a result, every seventh refunded, the others pending.
    await prisma.$executeRaw`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt",
                         "settledBlock", "settledBlockHash", "settledTx", "settledAt",
                         "refundedBlock", "refundedBlockHash", "refundedTx", "refundedAt", "lastChangeBlock")
      SELECT ${chainId}, i, '0x' || lpad(to_hex(i % 50), 40, '0'), ${NATIVE}, i * 1000, 'dice', 'c' || i, 's' || i, s::"BetStatus",
             i / 3, i % 3, 'ph' || (i / 3), 'pt' || i, 1700000000 + i,
             CASE WHEN s = 'SETTLED' THEN i / 3 + 1 END, CASE WHEN s = 'SETTLED' THEN 'sh' || i END,
             CASE WHEN s = 'SETTLED' THEN 'st' || i END, CASE WHEN s = 'SETTLED' THEN 1700000001 + i END,
             CASE WHEN s = 'REFUNDED' THEN i / 3 + 2 END, CASE WHEN s = 'REFUNDED' THEN 'rh' || i END,
             CASE WHEN s = 'REFUNDED' THEN 'rt' || i END, CASE WHEN s = 'REFUNDED' THEN 1700000002 + i END,
             i / 3 + CASE s WHEN 'SETTLED' THEN 1 WHEN 'REFUNDED' THEN 2 ELSE 0 END
      FROM generate_series(1, ${BETS}::int) AS i,
           LATERAL (SELECT CASE WHEN i % 5 = 0 THEN 'SETTLED' WHEN i % 7 = 0 THEN 'REFUNDED' ELSE 'PENDING' END AS s) AS status`;
    await prisma.$executeRaw`
      INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
      SELECT ${chainId}, i, ${proof.outcome}::numeric, i % 2 = 0, i * 1900, ${JSON.stringify(proof.proof)}::jsonb, ${proof.publicSignals}::text[],
             ${proof.solidityCalldata}, false
      FROM generate_series(5, ${BETS}::int, 5) AS i`;
    await prisma.$executeRaw`
      INSERT INTO "IndexedBlock" ("chainId", "number", hash) SELECT ${chainId}, n, 'b' || n FROM generate_series(${HEAD - 100n}::bigint, ${HEAD}::bigint) AS n`;
    const network: NetworkEntry = { chainId: 31337, name: "localnet", confirmations: 2, headBlock: HEAD, finalizedBlock: HEAD - 1n };
    // A sample compared in full: the newest bets (settled, refunded, pending, some final) and a few older ones.
    const sample = ["40000", "39999", "39998", "39995", "39991", "39990", "35", "10", "7", "1"];
    const expected = await asStored(prisma, await expectedRemovedRows(prisma, chainId, network, { betId: { in: sample } }));
    const since = await lastSeq(prisma);

    const started = performance.now();
    const removed = await new IndexerStore(db!).reset(31337, 0n, network);
    const seconds = (performance.now() - started) / 1000;
    console.info(`reset of ${BETS} bets (${BETS / 5} with results): ${seconds.toFixed(1)} s`);

    expect(removed).toBe(BETS);
    const [summary] = await prisma.$queryRaw<{ rows: bigint; removed: bigint; bets: bigint; ordered: boolean }[]>`
      SELECT count(*) AS rows, count(*) FILTER (WHERE type = 'REMOVED') AS removed, count(DISTINCT "betId") AS bets,
             bool_and(ordered) AS ordered
      FROM (SELECT type, "betId", "betId" < lag("betId") OVER (ORDER BY seq) IS NOT FALSE AS ordered
            FROM "BetUpdate" WHERE seq > ${since}) AS appended`;
    expect(summary).toEqual({ rows: BigInt(BETS), removed: BigInt(BETS), bets: BigInt(BETS), ordered: true });
    const stored = (await storedRows(prisma, chainId, since)).filter((row) => sample.includes(row.betId));
    expect(stored).toEqual(expected);
    expect(await leftOf(prisma, chainId)).toEqual({ bets: 0, results: 0, blocks: 0, tokens: [] });
    expect(await prisma.indexingCursor.findUniqueOrThrow({ where: { chainId } })).toMatchObject({ indexedBlock: 0n, indexedBlockHash: "", isReady: false });
  }, 300_000);
});
