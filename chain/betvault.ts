/**
 * Off-chain mirror of BetVault's conventions: the BN254 field, the client-seed mapping, the game
 * rules, the event signatures, and the conversions between the proof as snarkjs produces it and the
 * proof as `settleBet` takes it / `BetSettled` carries it.
 */
import { keccak256, toBytes, type Hex } from "viem";

/** BN254 scalar field order p, the client-seed mapping and commitments as bytes32: the circuit's own rules. */
export { FIELD_MODULUS, clientSeedToField, fieldToBytes32 } from "../zk/groth16.ts";
import { clientSeedToField, type SnarkjsProof } from "../zk/groth16.ts";
export const BPS = 10_000n;
/** Gas for a settleBet transaction. Never estimate it: the verifier returns false when out of gas. */
export const SETTLE_GAS = 600_000n;

/** The contract's fixed rules: won = outcome % modulus < winBelow; payout = stake * multiplierBps / 10000. */
export const GAMES = {
  coinflip: { modulus: 2n, winBelow: 1n, multiplierBps: 19_800n },
  dice: { modulus: 100n, winBelow: 49n, multiplierBps: 20_000n },
  wheel: { modulus: 10n, winBelow: 1n, multiplierBps: 98_000n },
} as const;
export type GameId = keyof typeof GAMES;
export const GAME_IDS = Object.keys(GAMES) as GameId[];

export function isGameId(game: string): game is GameId {
  return Object.hasOwn(GAMES, game);
}

export function betResult(game: GameId, outcome: bigint, stake: bigint): { won: boolean; payout: bigint } {
  const g = GAMES[game];
  const won = outcome % g.modulus < g.winBelow;
  return { won, payout: won ? (stake * g.multiplierBps) / BPS : 0n };
}

export function maxPayout(game: GameId, stake: bigint): bigint {
  return (stake * GAMES[game].multiplierBps) / BPS;
}

/** Canonical event signatures (topic0 = keccak256 of these). */
export const EVENT_SIGNATURES = {
  BetPlaced: "BetPlaced(uint256,address,address,uint256,string,bytes32,bytes32,uint64)",
  BetSettled: "BetSettled(uint256,address,uint256,bool,uint256,uint256[2],uint256[2][2],uint256[2])",
  BetRefunded: "BetRefunded(uint256,address,uint256)",
  CommitmentPublished: "CommitmentPublished(uint256,bytes32)",
} as const;
export const EVENT_TOPICS = Object.fromEntries(Object.entries(EVENT_SIGNATURES).map(([name, sig]) => [name, keccak256(toBytes(sig))])) as Record<
  keyof typeof EVENT_SIGNATURES,
  Hex
>;

/** The proof as `settleBet` takes it and `BetSettled` emits it (pB already in the verifier's order). */
export interface SolidityProof {
  pA: readonly [bigint, bigint];
  pB: readonly [readonly [bigint, bigint], readonly [bigint, bigint]];
  pC: readonly [bigint, bigint];
}

/**
 * Parse snarkjs' `exportSolidityCallData` string:
 * `["a0","a1"],[["b01","b00"],["b11","b10"]],["c0","c1"],["s0",...]` (hex quoted numbers).
 */
export function parseSolidityCalldata(calldata: string): SolidityProof & { pubSignals: bigint[] } {
  const parsed: unknown = JSON.parse(`[${calldata}]`);
  const big = (v: unknown): bigint => {
    if (typeof v !== "string") throw new Error("bad solidity calldata");
    return BigInt(v);
  };
  const pair = (v: unknown): [bigint, bigint] => {
    if (!Array.isArray(v) || v.length !== 2) throw new Error("bad solidity calldata");
    return [big(v[0]), big(v[1])];
  };
  if (!Array.isArray(parsed) || parsed.length !== 4) throw new Error("bad solidity calldata");
  const [a, b, c, s] = parsed as unknown[];
  if (!Array.isArray(b) || b.length !== 2 || !Array.isArray(s)) throw new Error("bad solidity calldata");
  return { pA: pair(a), pB: [pair(b[0]), pair(b[1])], pC: pair(c), pubSignals: s.map(big) };
}

/**
 * From the proof in BetSettled back to snarkjs' layout. snarkjs' Solidity export writes each G2
 * coordinate as [c1, c0] (the EIP-197 order the precompile wants) while its JSON keeps [c0, c1]; so
 * pi_b[i] = [pB[i][1], pB[i][0]]. The third (projective z) coordinate is 1 / [1, 0].
 */
export function toSnarkjsProof(proof: SolidityProof): SnarkjsProof {
  const s = (v: bigint): string => v.toString(10);
  return {
    pi_a: [s(proof.pA[0]), s(proof.pA[1]), "1"],
    pi_b: [
      [s(proof.pB[0][1]), s(proof.pB[0][0])],
      [s(proof.pB[1][1]), s(proof.pB[1][0])],
      ["1", "0"],
    ],
    pi_c: [s(proof.pC[0]), s(proof.pC[1]), "1"],
    protocol: "groth16",
    curve: "bn128",
  };
}

/** Inverse of toSnarkjsProof (requires affine points, z = 1, as snarkjs emits them). */
export function fromSnarkjsProof(proof: SnarkjsProof): SolidityProof {
  const n = (value: string | undefined): bigint => {
    if (value === undefined) throw new Error("not a snarkjs Groth16 proof: a coordinate is missing");
    return BigInt(value);
  };
  const [b0, b1] = proof.pi_b;
  return {
    pA: [n(proof.pi_a[0]), n(proof.pi_a[1])],
    pB: [
      [n(b0?.[1]), n(b0?.[0])],
      [n(b1?.[1]), n(b1?.[0])],
    ],
    pC: [n(proof.pi_c[0]), n(proof.pi_c[1])],
  };
}

/** Public signals as the contract builds them: [outcome, serverSeedHash, betId, clientSeedField]. */
export function publicSignalsOf(bet: { outcome: bigint; serverSeedHash: Hex; betId: bigint; clientSeed: Hex }): string[] {
  return [bet.outcome, BigInt(bet.serverSeedHash), bet.betId, clientSeedToField(bet.clientSeed)].map((v) => v.toString(10));
}

/** BetVault.Status as returned by getBet(). */
export const BET_STATUS = ["NONE", "PENDING", "SETTLED", "REFUNDED"] as const;
export type BetStatus = (typeof BET_STATUS)[number];
