// A reorg rollback (IndexerStore.rollback) undoes everything above the common ancestor in one
// transaction: bets placed above it are deleted (a REMOVED update with their last state and
// result), bets placed at or below it and settled or refunded above it go back to PENDING with
// their result deleted (a PLACED update with the pending bet), block rows above it go and the
// cursor moves to it. Checked exactly: the rows left (a digest of the expected rows against the
// actual ones), the outbox rows in order (each payload betUpdateRow's, byte for byte), the cursor.
// And a rollback touching more bets than a statement may carry bind parameters (32 767) completes
// too, on PostgreSQL: many bets a block under a large `confirmations`, or a deep reorg on a dev chain.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { pendingBet } from "../core/bet-row.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { betUpdateRow, type BetUpdateRow } from "../core/outbox.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import type { PrismaClient } from "../prisma/generated/client.ts";
import { betCountDrift } from "../test/bet-counts.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { fairnessDrift } from "../test/fairness-counts.ts";
import { testConfig } from "../test/config.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { IndexerStore, type BlockRef } from "./store.ts";

const NATIVE = "0x0000000000000000000000000000000000000000";
const CHAIN = 31337n;
const OTHER = 1337n;
const NEVER = 1n << 62n;

let db: TestDatabase | undefined;

afterEach(async () => {
  await db?.close();
  db = undefined;
});

afterAll(async () => {
  await releaseProverResources();
});

/**
 * `n` bets on `chainId`, three a block (bet i in block i / 3, log index i % 3), and the blocks of
 * the upper two thirds. Every second bet is settled (with a result, proof included) and every other
 * third refunded, `delay` blocks after its placement; a quarter of those already announced final.
 * Returns the head (the newest change).
 */
async function seed(prisma: PrismaClient, chainId: bigint, n: number, delay: number): Promise<bigint> {
  const [, proof] = [...readProofCache()][0]!;
  const head = BigInt(Math.floor(n / 3) + delay);
  await prisma.$executeRaw`
    INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (${chainId}, ${`net${chainId}`}, 2, '{}', '00')`;
  await prisma.$executeRaw`
    INSERT INTO "IndexingCursor" ("chainId", "indexedBlock", "indexedBlockHash", "headBlock", "finalizedBlock", "isReady", "updatedAt")
    VALUES (${chainId}, ${head}, ${`b${head}`}, ${head}, 0, true, now())`;
  await prisma.$executeRaw`
    INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                       "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt",
                       "settledBlock", "settledBlockHash", "settledTx", "settledAt",
                       "refundedBlock", "refundedBlockHash", "refundedTx", "refundedAt", "lastChangeBlock", "finalizedUpdateBlock")
    SELECT ${chainId}, i, '0x' || lpad(to_hex(i % 50), 40, '0'), ${NATIVE}, i * 1000, CASE WHEN i % 4 = 1 THEN 'wheel' ELSE 'dice' END,
           'c' || i, 's' || i, s::"BetStatus",
           i / 3, i % 3, 'b' || (i / 3), 'pt' || i, 1700000000 + i,
           CASE WHEN s = 'SETTLED' THEN i / 3 + ${delay}::int END, CASE WHEN s = 'SETTLED' THEN 'b' || (i / 3 + ${delay}::int) END,
           CASE WHEN s = 'SETTLED' THEN 'st' || i END, CASE WHEN s = 'SETTLED' THEN 1700000001 + i END,
           CASE WHEN s = 'REFUNDED' THEN i / 3 + ${delay}::int END, CASE WHEN s = 'REFUNDED' THEN 'b' || (i / 3 + ${delay}::int) END,
           CASE WHEN s = 'REFUNDED' THEN 'rt' || i END, CASE WHEN s = 'REFUNDED' THEN 1700000002 + i END,
           i / 3 + CASE WHEN s = 'PENDING' THEN 0 ELSE ${delay}::int END,
           CASE WHEN s <> 'PENDING' AND i % 8 < 2 THEN i / 3 + ${delay}::int END
    FROM generate_series(1, ${n}::int) AS i,
         LATERAL (SELECT CASE WHEN i % 2 = 0 THEN 'SETTLED' WHEN i % 3 = 0 THEN 'REFUNDED' ELSE 'PENDING' END AS s) AS status`;
  await prisma.$executeRaw`
    INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
    SELECT ${chainId}, i, ${proof.outcome}::numeric, i % 4 = 0, i * 1900, ${JSON.stringify(proof.proof)}::jsonb, ${proof.publicSignals}::text[],
           ${proof.solidityCalldata}, i % 6 = 0
    FROM generate_series(2, ${n}::int, 2) AS i`;
  await prisma.$executeRaw`
    INSERT INTO "IndexedBlock" ("chainId", "number", hash) SELECT ${chainId}, b, 'b' || b FROM generate_series(${head / 3n}::bigint, ${head}::bigint) AS b`;
  return head;
}

/** The bets of `chainId` as a rollback above `above` leaves them (NEVER: as they are), digested. */
async function betsDigest(prisma: PrismaClient, chainId: bigint, above: bigint): Promise<{ bets: bigint; digest: string }> {
  const [row] = await prisma.$queryRaw<{ bets: bigint; digest: string }[]>`
    SELECT count(*) AS bets, md5(string_agg(t::text, ',' ORDER BY t."betId")) AS digest FROM (
      SELECT "chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", "placedBlock", "placedLogIndex",
             "placedBlockHash", "placedTx", "placedAt",
             CASE WHEN "lastChangeBlock" > ${above} THEN 'PENDING' ELSE status::text END AS status,
             CASE WHEN "lastChangeBlock" > ${above} THEN array_fill(NULL::text, ARRAY[9]) ELSE ARRAY["settledBlock"::text, "settledBlockHash",
               "settledTx", "settledAt"::text, "refundedBlock"::text, "refundedBlockHash", "refundedTx", "refundedAt"::text,
               "finalizedUpdateBlock"::text] END AS lifecycle,
             CASE WHEN "lastChangeBlock" > ${above} THEN "placedBlock" ELSE "lastChangeBlock" END AS "lastChangeBlock"
      FROM "Bet" WHERE "chainId" = ${chainId} AND "placedBlock" <= ${above}) AS t`;
  return row!;
}

/** The results of `chainId` whose bet's latest change is at or below `above`, digested. */
async function resultsDigest(prisma: PrismaClient, chainId: bigint, above: bigint): Promise<{ results: bigint; digest: string }> {
  const [row] = await prisma.$queryRaw<{ results: bigint; digest: string }[]>`
    SELECT count(*) AS results, md5(string_agg(r::text, ',' ORDER BY r."betId")) AS digest
    FROM "BetResult" r JOIN "Bet" b USING ("chainId", "betId")
    WHERE r."chainId" = ${chainId} AND b."lastChangeBlock" <= ${above}`;
  return row!;
}

/** What a rollback above `above` appends, row by row without payloads, in the order it always has: latest change first. */
async function expectedUpdates(prisma: PrismaClient, chainId: bigint, above: bigint) {
  const [row] = await prisma.$queryRaw<{ removed: string[]; reverted: string[]; digest: string }[]>`
    SELECT coalesce(array_agg("betId"::text ORDER BY "betId") FILTER (WHERE "placedBlock" > ${above}), '{}') AS removed,
           coalesce(array_agg("betId"::text ORDER BY "betId") FILTER (WHERE "placedBlock" <= ${above}), '{}') AS reverted,
           md5(string_agg(concat_ws(':', "betId", CASE WHEN "placedBlock" > ${above} THEN 'REMOVED' ELSE 'PLACED' END, player, "placedBlock",
             "placedBlockHash"), ',' ORDER BY "lastChangeBlock" DESC, "placedBlock" DESC, "placedLogIndex" DESC)) AS digest
    FROM "Bet" WHERE "chainId" = ${chainId} AND "lastChangeBlock" > ${above}`;
  return row!;
}

/** The same of the rows appended after `since`, in seq order. */
async function appendedUpdates(prisma: PrismaClient, chainId: bigint, since: bigint) {
  const [row] = await prisma.$queryRaw<{ removed: string[]; reverted: string[]; digest: string; rows: bigint }[]>`
    SELECT coalesce(array_agg("betId"::text ORDER BY "betId") FILTER (WHERE type = 'REMOVED'), '{}') AS removed,
           coalesce(array_agg("betId"::text ORDER BY "betId") FILTER (WHERE type = 'PLACED'), '{}') AS reverted,
           md5(string_agg(concat_ws(':', "betId", type, player, "blockNumber", "blockHash"), ',' ORDER BY seq)) AS digest, count(*) AS rows
    FROM "BetUpdate" WHERE "chainId" = ${chainId} AND seq > ${since}`;
  return row!;
}

/** betUpdateRow of each affected bet of `sample` (all: undefined), as the rollback has always built them, payloads as stored jsonb text. */
async function expectedPayloads(prisma: PrismaClient, chainId: bigint, above: bigint, network: NetworkEntry, sample?: string[]) {
  const where = { chainId, lastChangeBlock: { gt: above }, ...(sample ? { betId: { in: sample } } : {}) };
  const bets = await prisma.bet.findMany({ where, orderBy: { betId: "asc" } });
  const results = new Map(
    (await prisma.betResult.findMany({ where: { chainId, betId: { in: bets.map((b) => b.betId) } } })).map((r) => [r.betId.toFixed(0), r]),
  );
  const rows: BetUpdateRow[] = bets.map((bet) => {
    const block = { number: bet.placedBlock, hash: bet.placedBlockHash };
    return bet.placedBlock > above
      ? betUpdateRow("REMOVED", bet, results.get(bet.betId.toFixed(0)) ?? null, block, network)
      : betUpdateRow("PLACED", pendingBet(bet), null, block, network);
  });
  const [canonical] = await prisma.$queryRaw<{ bets: string[] }[]>`
    SELECT ARRAY(SELECT e::text FROM jsonb_array_elements(${JSON.stringify(rows.map((r) => r.bet))}::jsonb) WITH ORDINALITY AS a(e, i) ORDER BY i) AS bets`;
  return rows.map((r, i) => ({ betId: typeof r.betId === "string" ? r.betId : r.betId.toFixed(0), type: r.type, bet: canonical!.bets[i]! }));
}

async function storedPayloads(prisma: PrismaClient, chainId: bigint, since: bigint, sample?: string[]) {
  const rows = await prisma.$queryRaw<{ betId: string; type: string; bet: string }[]>`
    SELECT "betId"::text AS "betId", type::text AS type, bet::text AS bet FROM "BetUpdate" WHERE "chainId" = ${chainId} AND seq > ${since} ORDER BY "BetUpdate"."betId"`;
  return sample ? rows.filter((r) => sample.includes(r.betId)) : rows;
}

async function lastSeq(prisma: PrismaClient): Promise<bigint> {
  const [row] = await prisma.$queryRaw<{ max: bigint | null }[]>`SELECT max(seq) AS max FROM "BetUpdate"`;
  return row?.max ?? 0n;
}

/**
 * Seeds `n` bets (and a few on another network), rolls back to a third of the head and checks the
 * outcome exactly; payloads in full, or of `sample` only. Resolves to the rollback's duration.
 */
async function rollbackAndCheck(n: number, sample?: string[]): Promise<{ seconds: number; affected: number; rss: number }> {
  const prisma = db!.prisma;
  const delay = Math.floor(n / 9);
  const head = await seed(prisma, CHAIN, n, delay);
  await seed(prisma, OTHER, 90, 10);
  const above = head / 3n;
  const network: NetworkEntry = { chainId: Number(CHAIN), name: `net${CHAIN}`, confirmations: 2, headBlock: head, finalizedBlock: above - 2n };
  const expectedBets = await betsDigest(prisma, CHAIN, above);
  const expectedResults = await resultsDigest(prisma, CHAIN, above);
  const expected = await expectedUpdates(prisma, CHAIN, above);
  const payloads = await expectedPayloads(prisma, CHAIN, above, network, sample);
  const other = { bets: await betsDigest(prisma, OTHER, NEVER), results: await resultsDigest(prisma, OTHER, NEVER) };
  // Every kind of affected bet is there: placed above (settled with a result, refunded, pending) and reverted (from both).
  expect(expected.removed.length).toBeGreaterThan(0);
  expect(expected.reverted.length).toBeGreaterThan(0);
  expect(payloads.some((p) => p.type === "REMOVED" && p.bet.includes('"piA"'))).toBe(true);
  expect(payloads.some((p) => p.type === "REMOVED" && p.bet.includes('"REFUNDED"'))).toBe(true);
  const since = await lastSeq(prisma);

  const from: BlockRef = { number: head, hash: `0xb${head}` };
  await prisma.$executeRaw`UPDATE "IndexingCursor" SET "indexedBlockHash" = ${from.hash} WHERE "chainId" = ${CHAIN}`;
  const ancestor: BlockRef = { number: above, hash: `0xb${above}` };
  const state = { headBlock: head + 1n, finalizedBlock: above - 1n, isReady: false };
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const returned = await new IndexerStore(db!).rollback({ chainId: Number(CHAIN), from, ancestor, network, state });
  const seconds = (performance.now() - started) / 1000;
  const rss = process.memoryUsage().rss;

  expect({ removed: [...returned.removed].sort(), reverted: [...returned.reverted].sort() }).toEqual({
    removed: [...expected.removed].sort(),
    reverted: [...expected.reverted].sort(),
  });
  const appended = await appendedUpdates(prisma, CHAIN, since);
  expect(appended).toEqual({ ...expected, rows: BigInt(expected.removed.length + expected.reverted.length) });
  expect(await storedPayloads(prisma, CHAIN, since, sample)).toEqual(payloads);
  expect(await betsDigest(prisma, CHAIN, NEVER)).toEqual(expectedBets);
  expect(await resultsDigest(prisma, CHAIN, NEVER)).toEqual(expectedResults);
  const [blocks] = await prisma.$queryRaw<{ above: bigint; kept: bigint }[]>`
    SELECT count(*) FILTER (WHERE "number" > ${above}) AS above, count(*) AS kept FROM "IndexedBlock" WHERE "chainId" = ${CHAIN}`;
  expect(blocks).toEqual({ above: 0n, kept: above - head / 3n + 1n });
  expect(await prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: CHAIN } })).toMatchObject({
    indexedBlock: above,
    indexedBlockHash: ancestor.hash,
    ...state,
  });
  expect(await betCountDrift(db!)).toEqual([]);
  expect(await fairnessDrift(db!)).toEqual([]);
  expect(await appendedUpdates(prisma, OTHER, since)).toMatchObject({ rows: 0n });
  expect({ bets: await betsDigest(prisma, OTHER, NEVER), results: await resultsDigest(prisma, OTHER, NEVER) }).toEqual(other);
  return { seconds, affected: appended.removed.length + appended.reverted.length, rss: Math.max(rss, rssBefore) };
}

describe("IndexerStore.rollback", () => {
  beforeEach(async () => {
    db = await createTestDatabase();
  });

  it("deletes the bets placed above the ancestor (REMOVED), reverts those changed above it to PENDING (PLACED), latest change first, and moves the cursor", async () => {
    const { affected } = await rollbackAndCheck(300);
    expect(affected).toBeGreaterThan(150);
  });
});

// PostgreSQL: the bets are seeded set-wise in a few statements (PGlite would take minutes).
describe.runIf(testConfig.TEST_DB === "postgres")("IndexerStore.rollback of more bets than a statement's bind parameters (PostgreSQL)", () => {
  beforeEach(async () => {
    db = await createTestDatabase();
  });

  it("completes, exactly as a small one", async () => {
    // Head 29 333, ancestor 9 777: bets from 29 334 placed above it, those from 7 335 settled or refunded above it (and 29 333, 7 334 unaffected).
    const sample = ["66000", "65999", "65997", "29336", "29335", "29334", "29333", "20001", "20000", "7336", "7335", "7334", "1"];
    const { seconds, affected, rss } = await rollbackAndCheck(66_000, sample);
    console.info(`rollback of ${affected} bets: ${seconds.toFixed(1)} s, rss ${Math.round(rss / 2 ** 20)} MiB`);
    expect(affected).toBeGreaterThan(40_000);
  }, 300_000);
});
