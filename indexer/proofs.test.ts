// Proofs at index time, with a real proof of the DEV circuit: rebuilt from the event layout,
// calldata from snarkjs, verified against the key; tampering and off-curve points are refused.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSolidityCalldata } from "../chain/betvault.ts";
import { BASE_FIELD_MODULUS, proveBetOutcome, releaseProverResources, type BetProof } from "../zk/groth16.ts";
import { DEFAULT_VERIFICATION_KEY_PATH } from "./config.ts";
import type { BetSettledEvent } from "./events.ts";
import { createProofVerifier, isOnG1, isOnG2, loadVerificationKey, proofPointsOnCurve, settlementProof, settlementProofs } from "./proofs.ts";

const clientSeed = `0x${"5a".repeat(32)}` as const;
let real: BetProof;

beforeAll(async () => {
  real = await proveBetOutcome({ serverSeed: 987_654_321n, betId: 42n, clientSeed });
});
afterAll(() => releaseProverResources());

function eventOf(proof: BetProof, overrides: Partial<BetSettledEvent> = {}): BetSettledEvent {
  const { pA, pB, pC } = parseSolidityCalldata(proof.solidityCalldata);
  return {
    kind: "BetSettled",
    betId: 42n,
    player: "0x00000000000000000000000000000000000000b1",
    blockNumber: 10n,
    blockHash: `0x${"01".repeat(32)}`,
    transactionHash: `0x${"02".repeat(32)}`,
    logIndex: 0,
    outcome: BigInt(proof.outcome),
    won: false,
    payout: 0n,
    proof: { pA, pB, pC },
    ...overrides,
  };
}

describe("loadVerificationKey", () => {
  it("keeps the file's exact text and its sha256", () => {
    const vk = loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH);
    const text = readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8");
    expect(vk.json).toBe(text);
    expect(vk.sha256).toBe(`0x${createHash("sha256").update(text).digest("hex")}`);
    expect(vk.key.nPublic).toBe(4);
  });

  it("names a missing or unusable key", () => {
    const dir = mkdtempSync(join(tmpdir(), "vk-"));
    try {
      expect(() => loadVerificationKey(join(dir, "none.json"))).toThrow(/cannot read/);
      writeFileSync(join(dir, "bad.json"), JSON.stringify({ protocol: "plonk" }));
      expect(() => loadVerificationKey(join(dir, "bad.json"))).toThrow(/not a groth16/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("settlementProof", () => {
  const verifier = () => createProofVerifier(loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH));

  it("rebuilds the prover's proof, signals and calldata from the event, verified", async () => {
    const out = await settlementProof(eventOf(real), { serverSeedHash: real.serverSeedHash as `0x${string}`, clientSeed }, verifier());
    expect(out.proof).toEqual(real.proof);
    expect(out.publicSignals).toEqual(real.publicSignals);
    expect(out.solidityCalldata).toBe(real.solidityCalldata);
    expect(out.verified).toBe(true);
  });

  it("says false for another outcome, another bet's seeds, or off-curve points", async () => {
    const v = verifier();
    const bet = { serverSeedHash: real.serverSeedHash as `0x${string}`, clientSeed };
    expect((await settlementProof(eventOf(real, { outcome: BigInt(real.outcome) + 1n }), bet, v)).verified).toBe(false);
    expect((await settlementProof(eventOf(real), { ...bet, clientSeed: `0x${"5b".repeat(32)}` }, v)).verified).toBe(false);
    const garbage = eventOf(real, {
      proof: {
        pA: [1n, 3n],
        pB: [
          [1n, 2n],
          [3n, 4n],
        ],
        pC: [5n, 6n],
      },
    });
    expect((await settlementProof(garbage, bet, v)).verified).toBe(false);
  });
});

describe("settlementProofs", () => {
  it.each([0, 2])("verifies a range's settlements as one batch (%i workers): each verdict is its own proof's", async (workers) => {
    const v = createProofVerifier(loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH), { workers });
    try {
      const bet = { serverSeedHash: real.serverSeedHash as `0x${string}`, clientSeed };
      const garbage = {
        pA: [1n, 3n],
        pB: [
          [1n, 2n],
          [3n, 4n],
        ],
        pC: [5n, 6n],
      } as const;
      const inputs = Array.from({ length: 20 }, (_, i) => ({
        event: eventOf(real, { logIndex: i, ...(i === 4 || i === 13 ? { outcome: BigInt(real.outcome) + 1n } : i === 9 ? { proof: garbage } : {}) }),
        bet,
      }));
      const out = await settlementProofs(inputs, v);
      expect(out.map((p) => p.verified)).toEqual(inputs.map((_, i) => i !== 4 && i !== 13 && i !== 9));
      expect(out[0]?.solidityCalldata).toBe(real.solidityCalldata);
      expect(out[0]?.proof).toEqual(real.proof);
      expect(await settlementProofs([], v)).toEqual([]);
    } finally {
      await v.close();
    }
  });
});

describe("curve checks", () => {
  it("accept a real proof's points and refuse moved or out-of-field ones", () => {
    expect(proofPointsOnCurve(real.proof as Parameters<typeof proofPointsOnCurve>[0])).toBe(true);
    const [x, y] = real.proof.pi_a.map(BigInt) as [bigint, bigint];
    expect(isOnG1(x, y)).toBe(true);
    expect(isOnG1(x, y + 1n)).toBe(false);
    expect(isOnG1(x + BASE_FIELD_MODULUS, y)).toBe(false);
    expect(isOnG1(1n, 2n)).toBe(true); // the generator
    const b = real.proof.pi_b.map((c) => c.map(BigInt)) as [[bigint, bigint], [bigint, bigint]];
    expect(isOnG2(b[0], b[1])).toBe(true);
    expect(isOnG2(b[0], [b[1][1], b[1][0]])).toBe(false); // swapped Fq2 coordinates (the calldata order)
  });
});
