// Proofs are verified at index time against the network's verification key, not taken on the
// contract's word: BetVault deployed against a verifier that accepts anything settles bets with a
// genuine proof, a tampered one and garbage; only the genuine one indexes as verified.
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fromSnarkjsProof, parseSolidityCalldata, publicSignalsOf, toSnarkjsProof } from "../chain/betvault.ts";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer } from "./indexer.ts";
import { createProofVerifier } from "./proofs.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { testConfig } from "../test/config.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
let chain: TestChain;
let db: TestDatabase;
let indexer: Indexer;

beforeAll(async () => {
  chain = await startTestChain({ permissive: true });
  db = await createTestDatabase();
  indexer = createIndexer({ db, logger, networks: [chain.network()] });
  await indexer.start();
});

afterAll(async () => {
  await indexer?.stop();
  await db?.close();
  await releaseProverResources();
  await chain?.stop();
});

it("indexes a genuine proof as verified and a tampered or garbage one as not verified", async () => {
  const { driver } = chain;
  await driver.ensureCommitments(3);
  for (let i = 0; i < 3; i++) await driver.place(i, { game: "dice" });
  const [genuine, tampered, garbage] = (await driver.mine()).placed as [bigint, bigint, bigint];

  await driver.settle(genuine);
  // Bet 2's own valid proof, but claiming another outcome: the points are fine, the pairing is not.
  const honest = await driver.prove(tampered);
  await driver.settle(tampered, { outcome: honest.outcome + 1n, proof: honest.proof });
  // Points that are not on the curve at all.
  await driver.settle(garbage, {
    outcome: 7n,
    proof: {
      pA: [1n, 3n],
      pB: [
        [1n, 2n],
        [3n, 4n],
      ],
      pC: [5n, 6n],
    },
  });
  const settled = await driver.mine();
  await indexer.synced();

  const results = new Map((await db.prisma.betResult.findMany()).map((r) => [BigInt(r.betId.toFixed(0)), r]));
  expect(results.get(genuine)?.verified).toBe(true);
  expect(results.get(tampered)?.verified).toBe(false);
  expect(results.get(garbage)?.verified).toBe(false);
  expect(results.get(tampered)?.outcome.toFixed(0)).toBe((honest.outcome + 1n).toString());

  // Each proof is the one the event carried, in snarkjs' layout, with the contract's public signals
  // and snarkjs's own calldata export.
  const bets = new Map((await db.prisma.bet.findMany()).map((b) => [BigInt(b.betId.toFixed(0)), b]));
  for (const [betId, r] of results) {
    const bet = bets.get(betId);
    if (!bet) throw new Error(`no bet ${betId}`);
    const proof = r.proof as unknown as ReturnType<typeof toSnarkjsProof>;
    expect(r.publicSignals).toEqual(
      publicSignalsOf({
        outcome: BigInt(r.outcome.toFixed(0)),
        serverSeedHash: bet.serverSeedHash as `0x${string}`,
        betId,
        clientSeed: bet.clientSeed as `0x${string}`,
      }),
    );
    expect(r.solidityCalldata).toBe(await snarkjs.groth16.exportSolidityCallData(proof, r.publicSignals));
    const parsed = parseSolidityCalldata(r.solidityCalldata);
    expect({ pA: parsed.pA, pB: parsed.pB, pC: parsed.pC }).toEqual(fromSnarkjsProof(proof));
    expect(bet.status).toBe("SETTLED");
    expect(bet.settledBlock).toBe(settled.block);
  }
  expect(results.get(tampered)?.proof).toEqual(toSnarkjsProof(honest.proof));

  // The SETTLED outbox payloads say the same.
  const updates = await db.prisma.betUpdate.findMany({ where: { type: "SETTLED" }, orderBy: { seq: "asc" } });
  const verdicts = updates.map((u) => (u.bet as { result: { proof: { verified: boolean } } }).result.proof.verified);
  expect(verdicts).toEqual([true, false, false]);
});

it("backfills settlements through the worker pool, pipelined per commit: exactly the tampered proofs false", async () => {
  const { driver } = chain;
  const N = 40;
  await driver.ensureCommitments(N);
  for (let i = 0; i < N; i++) await driver.place(i % 8, { game: "dice" });
  const ids = (await driver.mine()).placed;
  expect(ids).toHaveLength(N);
  // Tampered ones in both halves; each half settles in its own block, so a commit of at most 20
  // settlements holds one half: two commits, each a batch of 20 for the pool (≥ its 16-proof slice).
  const tampered = new Set([ids[2], ids[25], ids[39]]);
  const blocks: bigint[] = [];
  for (const half of [ids.slice(0, N / 2), ids.slice(N / 2)]) {
    for (const id of half) {
      if (!tampered.has(id)) {
        await driver.settle(id);
        continue;
      }
      const honest = await driver.prove(id);
      await driver.settle(id, { outcome: honest.outcome + 1n, proof: honest.proof });
    }
    blocks.push((await driver.mine()).block);
  }
  await driver.mineEmpty(4); // final: the second indexer backfills the settlement blocks

  // What reaches the verifier and when, next to the commits.
  const trace: string[] = [];
  const backfillDb = await createTestDatabase();
  const backfill = createIndexer({
    db: backfillDb,
    logger,
    networks: [chain.network()],
    maxSettlementsPerCommit: N / 2,
    createVerifier: (vk) => {
      const pool = createProofVerifier(vk, { workers: 2 });
      return {
        ...pool,
        verifyMany: (items) => {
          trace.push(`verify ${items.length}`);
          return pool.verifyMany(items);
        },
      };
    },
    onEvent: (e) => {
      if (e.type === "block" && e.mode === "backfill" && e.events > 0) trace.push("commit");
    },
  });
  try {
    await backfill.start();
    await backfill.synced();
    const results = new Map((await backfillDb.prisma.betResult.findMany()).map((r) => [BigInt(r.betId.toFixed(0)), r.verified]));
    expect(ids.map((id) => results.get(id))).toEqual(ids.map((id) => !tampered.has(id)));
    // Both groups went to the pool before the first was committed: the second was verified while
    // the first was written.
    const steps = trace.filter((t) => t !== "verify 0");
    expect(steps.slice(0, 3).map((t) => t.split(" ")[0])).toEqual(["verify", "verify", "commit"]);
    // Each a batch big enough for the pool's workers (zk/verify-pool.ts: 16 proofs or more).
    expect(steps.slice(0, 2).map((t) => Number(t.split(" ")[1]) >= 16)).toEqual([true, true]);
    expect(trace.filter((t) => t === "commit").length).toBeGreaterThanOrEqual(2);
    expect(blocks).toHaveLength(2);
  } finally {
    await backfill.stop();
    await backfillDb.close();
  }
});

it("stores every settlement unverified, a genuine proof's too, under the benchmark-only skipProofVerification", async () => {
  const { driver } = chain;
  await driver.ensureCommitments(1);
  await driver.place(0, { game: "dice" });
  const [genuine] = (await driver.mine()).placed as [bigint];
  await driver.settle(genuine);
  await driver.mine();
  await driver.mineEmpty(4);
  await indexer.synced();
  const verdictOf = async (database: TestDatabase) =>
    (await database.prisma.betResult.findMany()).find((r) => BigInt(r.betId.toFixed(0)) === genuine)?.verified;
  expect(await verdictOf(db)).toBe(true);

  const skippingDb = await createTestDatabase();
  const skipping = createIndexer({ db: skippingDb, logger, networks: [chain.network()], skipProofVerification: true });
  try {
    await skipping.start();
    await skipping.synced();
    expect(await verdictOf(skippingDb)).toBe(false);
    expect(await skippingDb.prisma.betResult.count({ where: { verified: true } })).toBe(0);
  } finally {
    await skipping.stop();
    await skippingDb.close();
  }
});
