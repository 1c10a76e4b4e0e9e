// The shape of Groth16 proofs, keys and signals, with no runtime dependency: shared by the server
// (zk/groth16.ts) and by browsers (the client package verifies proofs in the page with snarkjs'
// browser build), so both refuse exactly the same malformed input before snarkjs sees it.

/** BN254 (alt_bn128) scalar field modulus p: every circuit signal is an integer in [0, p). */
export const FIELD_MODULUS = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** BN254 base field modulus q: proof point coordinates are integers in [0, q). */
export const BASE_FIELD_MODULUS = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

/** A Groth16 proof in snarkjs' layout: projective coordinates as decimal strings. */
export interface SnarkjsProof {
  /** G1 point [x, y, "1"]. */
  pi_a: string[];
  /** G2 point [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]] (snarkjs order; calldata swaps c0/c1). */
  pi_b: string[][];
  /** G1 point [x, y, "1"]. */
  pi_c: string[];
  protocol: string;
  curve: string;
}

/** The verification key JSON snarkjs exports for Groth16. */
export interface Groth16VerificationKey {
  protocol: string;
  curve: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  vk_alphabeta_12: string[][][];
  IC: string[][];
}

const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;

function isDecimalBelow(value: unknown, modulus: bigint): value is string {
  return typeof value === "string" && DECIMAL_RE.test(value) && BigInt(value) < modulus;
}

function isG1Affine(point: unknown): boolean {
  return (
    Array.isArray(point) &&
    point.length === 3 &&
    isDecimalBelow(point[0], BASE_FIELD_MODULUS) &&
    isDecimalBelow(point[1], BASE_FIELD_MODULUS) &&
    point[2] === "1"
  );
}

function isFq2(value: unknown): boolean {
  return Array.isArray(value) && value.length === 2 && isDecimalBelow(value[0], BASE_FIELD_MODULUS) && isDecimalBelow(value[1], BASE_FIELD_MODULUS);
}

function isG2Affine(point: unknown): boolean {
  if (!Array.isArray(point) || point.length !== 3 || !isFq2(point[0]) || !isFq2(point[1])) return false;
  const z: unknown = point[2];
  return Array.isArray(z) && z.length === 2 && z[0] === "1" && z[1] === "0";
}

/**
 * Shape checks snarkjs does not make. Proof points must be affine (z = 1, as snarkjs emits them)
 * with canonical coordinates (< q): the Solidity calldata drops z, so anything else could verify
 * here and fail on-chain. publicSignals must be exactly nPublic canonical decimal strings (< p):
 * snarkjs would treat missing trailing signals as 0.
 */
export function isWellFormedProof(vk: unknown, proof: unknown, publicSignals: unknown): boolean {
  if (typeof vk !== "object" || vk === null || typeof proof !== "object" || proof === null) return false;
  const key = vk as Partial<Record<keyof Groth16VerificationKey, unknown>>;
  const p = proof as Partial<Record<keyof SnarkjsProof, unknown>>;
  if (key.protocol !== "groth16" || key.curve !== "bn128") return false;
  if (typeof key.nPublic !== "number" || !Number.isSafeInteger(key.nPublic) || key.nPublic < 0) return false;
  if (!Array.isArray(key.IC) || key.IC.length !== key.nPublic + 1) return false;
  if (p.protocol !== undefined && p.protocol !== "groth16") return false;
  if (p.curve !== undefined && p.curve !== "bn128") return false;
  if (!isG1Affine(p.pi_a) || !isG2Affine(p.pi_b) || !isG1Affine(p.pi_c)) return false;
  return Array.isArray(publicSignals) && publicSignals.length === key.nPublic && publicSignals.every((s) => isDecimalBelow(s, FIELD_MODULUS));
}
