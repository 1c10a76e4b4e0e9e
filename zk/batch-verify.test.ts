// Batch verification (zk/batch-verify.ts) and its worker pool (zk/verify-pool.ts): verdicts equal
// snarkjs's one-by-one verdicts, a failing batch is bisected down to exactly the bad proofs, and
// malformed input is refused without a crash.
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBatchVerifier, type BatchItem } from "./batch-verify.ts";
import { FIELD_MODULUS, loadDevVerificationKey, proveBetOutcome, releaseProverResources, verifyBetProof, type SnarkjsProof } from "./groth16.ts";
import { createVerifyPool, workerUrl, type VerifyPool } from "./verify-pool.ts";

const { key } = loadDevVerificationKey();
const N = 6;
let genuine: BatchItem[];
let pools: VerifyPool[] = [];

beforeAll(async () => {
  genuine = [];
  for (let i = 0; i < N; i++) {
    const bet = await proveBetOutcome({ serverSeed: 1000n + BigInt(i), betId: BigInt(i + 1), clientSeed: `0x${(i + 10).toString(16).padStart(64, "0")}` });
    genuine.push({ proof: bet.proof, publicSignals: bet.publicSignals });
  }
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  pools = [];
  await releaseProverResources();
});

const proofOf = (item: BatchItem) => item.proof as SnarkjsProof;
const signalsOf = (item: BatchItem) => item.publicSignals as string[];
/** The item's own proof, claiming another outcome: points fine, pairing not. */
const tamper = (item: BatchItem): BatchItem => ({
  proof: proofOf(item),
  publicSignals: signalsOf(item).map((s, i) => (i === 0 ? ((BigInt(s) + 1n) % FIELD_MODULUS).toString() : s)),
});

async function snarkjsVerdicts(items: readonly BatchItem[]): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const item of items) out.push(await verifyBetProof(key, item.proof, item.publicSignals));
  return out;
}

/** (A + D, A − D) with D the G1 generator: wrong alone, and their errors cancel in an unweighted sum. */
async function cancellingPair(item: BatchItem): Promise<[BatchItem, BatchItem]> {
  const curve = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
  const { G1 } = curve;
  const a = G1.fromObject(proofOf(item).pi_a.map(BigInt));
  const d = G1.fromObject([1n, 2n, 1n]);
  const shifted = (p: Uint8Array) => ({ ...proofOf(item), pi_a: [...G1.toObject(G1.toAffine(p)).slice(0, 2).map(String), "1"] });
  return [
    { proof: shifted(G1.add(a, d)), publicSignals: signalsOf(item) },
    { proof: shifted(G1.add(a, G1.neg(d))), publicSignals: signalsOf(item) },
  ];
}

describe("createBatchVerifier", () => {
  it("verifies a batch of genuine proofs with one pairing check", async () => {
    const verifier = await createBatchVerifier(key);
    expect(verifier.verify(genuine)).toEqual(genuine.map(() => true));
    expect(verifier.checks).toBe(1);
    expect(verifier.verify([])).toEqual([]);
  });

  it("bisects a failing batch down to exactly the tampered proof(s)", async () => {
    const verifier = await createBatchVerifier(key);
    const one = genuine.map((g, i) => (i === 3 ? tamper(g) : g));
    expect(verifier.verify(one)).toEqual([true, true, true, false, true, true]);
    const two = genuine.map((g, i) => (i === 0 || i === 4 ? tamper(g) : g));
    expect(verifier.verify(two)).toEqual([false, true, true, true, false, true]);
    expect(verifier.verify(two)).toEqual(await snarkjsVerdicts(two));
    // A proof swapped onto another bet's signals fails too, and only there.
    const swapped = [...genuine, { proof: genuine[0]?.proof, publicSignals: genuine[1]?.publicSignals }];
    expect(verifier.verify(swapped)).toEqual([...genuine.map(() => true), false]);
  });

  it("bisects across several shared Miller-loop chunks: exactly the tampered proofs fail", async () => {
    const verifier = await createBatchVerifier(key);
    // 50 items: more than three chunks of shared Miller loops; bad ones in the first, a middle and the last chunk.
    const bad = new Set([0, 17, 18, 49]);
    const items = Array.from({ length: 50 }, (_, i) => (bad.has(i) ? tamper(genuine[i % N] as BatchItem) : (genuine[i % N] as BatchItem)));
    expect(verifier.verify(items)).toEqual(items.map((_, i) => !bad.has(i)));
    const good = Array.from({ length: 50 }, (_, i) => genuine[i % N] as BatchItem);
    const before = verifier.checks;
    expect(verifier.verify(good)).toEqual(good.map(() => true));
    expect(verifier.checks - before).toBe(1);
  });

  it("checks a half whose sibling passed not at all: one tampered proof costs one check per halving", async () => {
    const verifier = await createBatchVerifier(key);
    // 64 items, the last one tampered: every first half passes, so its second half is known to fail.
    const items = Array.from({ length: 64 }, (_, i) => (i === 63 ? tamper(genuine[i % N] as BatchItem) : (genuine[i % N] as BatchItem)));
    const before = verifier.checks;
    expect(verifier.verify(items)).toEqual(items.map((_, i) => i !== 63));
    // The whole batch, then one check per halving (chunks, then the failing chunk's proofs): at most
    // 1 + log2(64); checking both halves each time took about twice that.
    expect(verifier.checks - before).toBeLessThanOrEqual(1 + Math.log2(64));
  });

  it("weights each proof at random: two wrong proofs whose errors cancel in a plain sum both fail", async () => {
    const verifier = await createBatchVerifier(key);
    const [plus, minus] = await cancellingPair(genuine[2] as BatchItem);
    expect(await snarkjsVerdicts([plus, minus])).toEqual([false, false]);
    expect(verifier.verify([plus, minus, ...genuine])).toEqual([false, false, ...genuine.map(() => true)]);
  });

  it("refuses malformed proofs and signals without a crash, and still verifies the rest", async () => {
    const verifier = await createBatchVerifier(key);
    const g = genuine[0] as BatchItem;
    const proof = proofOf(g);
    const signals = signalsOf(g);
    const malformed: BatchItem[] = [
      { proof: { ...proof, pi_a: ["1", "3", "1"] }, publicSignals: signals }, // not on the curve
      {
        proof: {
          ...proof,
          pi_b: [
            ["1", "2"],
            ["3", "4"],
            ["1", "0"],
          ],
        },
        publicSignals: signals,
      },
      { proof, publicSignals: signals.map((s, i) => (i === 2 ? (BigInt(s) + FIELD_MODULUS).toString() : s)) }, // ≥ r
      { proof, publicSignals: signals.slice(0, 3) },
      { proof, publicSignals: ["x", "1", "2", "3"] },
      { proof: null, publicSignals: signals },
      { proof: { ...proof, pi_c: ["nope"] }, publicSignals: signals },
      { proof: "garbage", publicSignals: 42 },
    ];
    const items = [...malformed, ...genuine];
    expect(verifier.verify(items)).toEqual([...malformed.map(() => false), ...genuine.map(() => true)]);
    expect(await snarkjsVerdicts(malformed)).toEqual(malformed.map(() => false));
  });

  it("refuses a B on the twist but outside the order-r subgroup", async () => {
    const curve = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
    // y² = x³ + b' over Fq2: search x = (k, 1) until the right-hand side is a square.
    const F = (curve.G2 as unknown as { F: Fq2 }).F;
    const b = (curve.G2 as unknown as { b: Uint8Array }).b;
    let point: Uint8Array | undefined;
    for (let k = 1n; !point; k++) {
      const x = F.fromObject([k, 1n]);
      const rhs = F.add(F.mul(F.square(x), x), b);
      if (F.isSquare(rhs)) point = new Uint8Array([...x, ...F.sqrt(rhs)]);
    }
    expect(curve.G2.isValid(point)).toBe(true);
    expect(curve.G2.isZero(curve.G2.timesScalar(point, curve.r))).toBe(false);
    const [x, y] = curve.G2.toObject(point);
    const g = genuine[0] as BatchItem;
    const bad = { proof: { ...proofOf(g), pi_b: [x?.map(String), y?.map(String), ["1", "0"]] }, publicSignals: signalsOf(g) };
    const verifier = await createBatchVerifier(key);
    expect(verifier.verify([bad, ...genuine])).toEqual([false, ...genuine.map(() => true)]);
  });
});

interface Fq2 {
  fromObject(v: bigint[]): Uint8Array;
  add(a: Uint8Array, b: Uint8Array): Uint8Array;
  mul(a: Uint8Array, b: Uint8Array): Uint8Array;
  square(a: Uint8Array): Uint8Array;
  isSquare(a: Uint8Array): boolean;
  sqrt(a: Uint8Array): Uint8Array;
}

describe("createVerifyPool", () => {
  it("starts its workers from the esbuild bundle (no TypeScript loader in the worker)", async () => {
    const url = await workerUrl();
    expect(url.protocol).toBe("data:");
    expect(decodeURIComponent(url.href)).toContain("parentPort");
  });

  it.each([0, 2])("with %i workers: the same verdicts as snarkjs, in order, over many slices", async (workers) => {
    const pool = createVerifyPool(key, { workers });
    pools.push(pool);
    // 40 items: two slices of 20 when there are two workers; bad ones in both.
    const items = Array.from({ length: 40 }, (_, i) => {
      const g = genuine[i % N] as BatchItem;
      return i === 5 || i === 31 ? tamper(g) : i === 22 ? { proof: "garbage", publicSignals: [] } : g;
    });
    const verdicts = await pool.verify(items);
    expect(verdicts).toEqual(items.map((_, i) => i !== 5 && i !== 31 && i !== 22));
    expect(await pool.verify([])).toEqual([]);
    expect(await pool.verify([tamper(genuine[1] as BatchItem)])).toEqual([false]);
    await pool.close();
    // A closed pool starts new workers on the next call.
    const many = Array.from({ length: 32 }, (_, i) => genuine[i % N] as BatchItem);
    expect(await pool.verify(many)).toEqual(many.map(() => true));
    // Workers gone mid-call (closed here): the slices are verified on this thread, same verdicts.
    const pending = pool.verify(items);
    await pool.close();
    expect(await pending).toEqual(verdicts);
  });

  it.each([0, 2])("with %i workers: warm() starts them all before any proof arrives (once), and verify() then uses them", async (workers) => {
    const pool = createVerifyPool(key, { workers });
    pools.push(pool);
    expect(await pool.warm()).toBe(workers);
    expect(await pool.warm()).toBe(workers);
    const many = Array.from({ length: 32 }, (_, i) => (i === 7 ? tamper(genuine[i % N] as BatchItem) : (genuine[i % N] as BatchItem)));
    expect(await pool.verify(many)).toEqual(many.map((_, i) => i !== 7));
    await pool.close();
  });
});
