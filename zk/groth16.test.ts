import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BetProof,
  DEV_ARTIFACTS,
  FIELD_MODULUS,
  clientSeedToField,
  computeOutcome,
  fieldToBytes32,
  loadDevVerificationKey,
  proveBetOutcome,
  releaseProverResources,
  serverSeedCommitment,
  verifyBetProof,
} from "./groth16.ts";

// Fixed test vector. The client seed is > p, so the `% p` mapping is exercised.
const SERVER_SEED = 0x1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100abcn;
const BET_ID = 42n;
const CLIENT_SEED = `0x${"ab".repeat(32)}`;

const { json: vkJson, key: vk } = loadDevVerificationKey();
let bet: BetProof;

beforeAll(async () => {
  bet = await proveBetOutcome({ serverSeed: SERVER_SEED, betId: BET_ID, clientSeed: CLIENT_SEED });
});

afterAll(async () => {
  await releaseProverResources();
});

const bump = (s: string): string => ((BigInt(s) + 1n) % FIELD_MODULUS).toString();

describe("field mapping and Poseidon", () => {
  it("maps a bytes32 client seed with uint256 % p (any case in, strict shape)", () => {
    const raw = BigInt(CLIENT_SEED);
    expect(raw >= FIELD_MODULUS).toBe(true);
    expect(clientSeedToField(CLIENT_SEED)).toBe(raw % FIELD_MODULUS);
    expect(clientSeedToField(CLIENT_SEED.toUpperCase().replace("0X", "0x"))).toBe(raw % FIELD_MODULUS);
    expect(clientSeedToField(`0x${"00".repeat(31)}07`)).toBe(7n);
    expect(() => clientSeedToField("0x1234")).toThrow(TypeError);
    expect(() => clientSeedToField("ab".repeat(32))).toThrow(TypeError);
  });

  it("matches circomlib's Poseidon (known vector) and rejects out-of-field inputs", () => {
    expect(serverSeedCommitment(1n)).toBe(18586133768512220936620570745912940619677854269274689475585506675881198879027n);
    expect(() => computeOutcome({ serverSeed: 1n, betId: FIELD_MODULUS, clientSeed: CLIENT_SEED })).toThrow(RangeError);
    expect(() => serverSeedCommitment(-1n)).toThrow(RangeError);
    // A bigint client seed is an already mapped field element.
    expect(computeOutcome({ serverSeed: 1n, betId: 2n, clientSeed: 3n })).toBe(
      computeOutcome({ serverSeed: 1n, betId: 2n, clientSeed: `0x${"00".repeat(31)}03` }),
    );
  });
});

describe("proveBetOutcome", () => {
  it("produces a proof that verifies with the committed verification key", async () => {
    expect(vkJson).toBe(readFileSync(DEV_ARTIFACTS.verificationKey, "utf8"));
    expect(vk.nPublic).toBe(4);
    expect(await verifyBetProof(vk, bet.proof, bet.publicSignals)).toBe(true);
    expect(bet.proof.protocol).toBe("groth16");
    expect(bet.proof.curve).toBe("bn128");
  });

  it("returns publicSignals [outcome, commitment, betId, clientSeedField] and the JS outcome", () => {
    const commitment = serverSeedCommitment(SERVER_SEED);
    const outcome = computeOutcome({ serverSeed: SERVER_SEED, betId: BET_ID, clientSeed: CLIENT_SEED });
    expect(bet.publicSignals).toEqual([outcome.toString(), commitment.toString(), BET_ID.toString(), clientSeedToField(CLIENT_SEED).toString()]);
    expect(bet.outcome).toBe(outcome.toString());
    expect(bet.serverSeedHash).toBe(fieldToBytes32(commitment));
    expect(bet.serverSeedHash).toMatch(/^0x[0-9a-f]{64}$/);
    for (const s of [...bet.publicSignals, ...bet.proof.pi_a, ...bet.proof.pi_b.flat(), ...bet.proof.pi_c]) {
      expect(s).toMatch(/^(0|[1-9][0-9]*)$/);
    }
    expect(JSON.stringify(bet)).not.toContain(SERVER_SEED.toString());
  });

  it("returns snarkjs' own Solidity calldata (pi_b coordinates swapped)", async () => {
    expect(bet.solidityCalldata).toBe(await snarkjs.groth16.exportSolidityCallData(bet.proof, bet.publicSignals));
    const [, pB, , pub] = JSON.parse(`[${bet.solidityCalldata}]`) as [string[], string[][], string[], string[]];
    const b = bet.proof.pi_b;
    expect(pB.map((pair) => pair.map((h) => BigInt(h).toString()))).toEqual([
      [b[0]?.[1], b[0]?.[0]],
      [b[1]?.[1], b[1]?.[0]],
    ]);
    expect(pub.map((h) => BigInt(h).toString())).toEqual(bet.publicSignals);
  });

  it("binds the proof to the on-chain commitment when one is given", async () => {
    const wrong = fieldToBytes32(serverSeedCommitment(SERVER_SEED + 1n));
    const err = await proveBetOutcome({
      serverSeed: SERVER_SEED,
      betId: BET_ID,
      clientSeed: CLIENT_SEED,
      serverSeedHash: wrong,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).not.toContain(SERVER_SEED.toString());
    await expect(proveBetOutcome({ serverSeed: FIELD_MODULUS, betId: BET_ID, clientSeed: CLIENT_SEED })).rejects.toThrow(RangeError);
    await expect(proveBetOutcome({ serverSeed: SERVER_SEED, betId: FIELD_MODULUS, clientSeed: CLIENT_SEED })).rejects.toThrow(RangeError);
  });

  it("cannot prove a wrong seed against another seed's commitment (the circuit refuses)", async () => {
    const otherSeed = SERVER_SEED + 1n;
    const input = {
      serverSeedHash: serverSeedCommitment(SERVER_SEED).toString(),
      betId: BET_ID.toString(),
      clientSeed: clientSeedToField(CLIENT_SEED).toString(),
      serverSeed: otherSeed.toString(),
    };
    await expect(snarkjs.groth16.fullProve(input, DEV_ARTIFACTS.wasm, DEV_ARTIFACTS.zkey)).rejects.toThrow();
  });
});

describe("verifyBetProof", () => {
  it("rejects each tampered public signal", async () => {
    for (let i = 0; i < bet.publicSignals.length; i++) {
      const signals = bet.publicSignals.map((s, j) => (j === i ? bump(s) : s));
      expect(await verifyBetProof(vk, bet.proof, signals), `signal ${i}`).toBe(false);
    }
  });

  it("rejects tampered proof elements", async () => {
    const p = bet.proof;
    const variants = [
      { ...p, pi_a: [bump(p.pi_a[0] ?? "0"), ...p.pi_a.slice(1)] },
      { ...p, pi_c: [p.pi_c[0] ?? "0", bump(p.pi_c[1] ?? "0"), "1"] },
      { ...p, pi_b: [[p.pi_b[0]?.[1] ?? "0", p.pi_b[0]?.[0] ?? "0"], ...p.pi_b.slice(1)] }, // swapped c0/c1
      { ...p, pi_a: p.pi_c, pi_c: p.pi_a }, // valid points, wrong roles
    ];
    for (const [i, proof] of variants.entries()) {
      expect(await verifyBetProof(vk, proof, bet.publicSignals), `variant ${i}`).toBe(false);
    }
  });

  it("returns false (never throws) on malformed input", async () => {
    const p = bet.proof;
    const sig = bet.publicSignals;
    const cases: [object, unknown, unknown][] = [
      [vk, null, sig],
      [vk, {}, sig],
      [vk, "proof", sig],
      [vk, p, null],
      [vk, p, sig.slice(0, 3)], // snarkjs alone would treat the missing signal as 0
      [vk, p, [...sig, "1"]],
      [vk, p, sig.map((s, i) => (i === 2 ? `0x${BigInt(s).toString(16)}` : s))],
      [vk, p, sig.map((s, i) => (i === 2 ? (BigInt(s) + FIELD_MODULUS).toString() : s))],
      [vk, p, sig.map((s, i) => (i === 2 ? `0${s}` : s))],
      [vk, { ...p, pi_a: [...p.pi_a.slice(0, 2), "2"] }, sig], // non-affine
      [vk, { ...p, pi_a: ["x", "y", "1"] }, sig],
      [vk, { ...p, pi_b: [["1"], ["2"], ["1", "0"]] }, sig],
      [vk, { ...p, protocol: "plonk" }, sig],
      [{}, p, sig],
      [{ ...vk, IC: vk.IC.slice(0, 2) }, p, sig],
      [{ ...vk, vk_alpha_1: ["1", "1", "1"] }, p, sig], // not a curve point
    ];
    for (const [i, [key, proof, signals]] of cases.entries()) {
      await expect(verifyBetProof(key, proof, signals), `case ${i}`).resolves.toBe(false);
    }
  });
});

describe("committed DEV artifacts", () => {
  it("ship a Solidity verifier for 4 public signals with the same key", () => {
    const sol = readFileSync(DEV_ARTIFACTS.solidityVerifier, "utf8");
    expect(sol).toContain("contract Groth16Verifier");
    expect(sol).toContain("uint[4] calldata _pubSignals");
    expect(sol).toContain(vk.vk_alpha_1[0]);
    expect(sol).toContain(vk.IC[4]?.[1]);
  });
});
