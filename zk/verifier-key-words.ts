// A Groth16 verification key's constants as the snarkjs Solidity verifier holds them: every
// coordinate is a `uint256 constant`, inlined by solc as a PUSH32 where checkPairing uses it. This
// compares a key with a verifier's runtime bytecode, constant for constant and in the verifier's
// order (indexer/verifier-key.ts explains why order matters). Import-free: the client package gets
// a copy (client/wire/, `npm run client:wire`) to check a served key against the chain itself.

/** The coordinates of a snarkjs verification key (verification_key.json) this comparison reads. */
export interface VerifierKeyCoordinates {
  vk_alpha_1: readonly string[];
  vk_beta_2: readonly (readonly string[])[];
  vk_gamma_2: readonly (readonly string[])[];
  vk_delta_2: readonly (readonly string[])[];
  IC: readonly (readonly string[])[];
}

const word = (decimal: string) => BigInt(decimal).toString(16).padStart(64, "0");
const PUSH1 = 0x60;
const PUSH32 = 0x7f;

/** The operands of the code's PUSH32 instructions, in code order (push data skipped, so never read as opcodes). */
export function push32Operands(code: string): string[] {
  const hex = code.startsWith("0x") ? code.slice(2) : code;
  const out: string[] = [];
  for (let at = 0; at + 2 <= hex.length; ) {
    const op = Number.parseInt(hex.slice(at, at + 2), 16);
    const data = op >= PUSH1 && op <= PUSH32 ? op - PUSH1 + 1 : 0;
    if (op === PUSH32 && at + 2 + 64 <= hex.length) out.push(hex.slice(at + 2, at + 2 + 64));
    at += 2 + 2 * data;
  }
  return out;
}

export interface KeyConstant {
  /** The template's name for it: alpha.x, beta.x1, IC3.y, ... */
  name: string;
  /** 64 lowercase hex digits. */
  word: string;
}

/**
 * Every coordinate of the key, named, in the order the snarkjs template's checkPairing pushes them
 * (solc 0.8, optimised): IC0 (x, y); each further IC point as a g1_mulAccC argument, and Yul
 * evaluates arguments right to left, so y before x; then alpha (x, y), beta, gamma, delta. A G2
 * point's coordinates go in the EIP-197 order the template writes (x1 is the key file's x[1], x2
 * its x[0], likewise y).
 */
export function verificationKeyWords(key: VerifierKeyCoordinates): KeyConstant[] {
  const at = (point: readonly (readonly string[])[], i: number, j: number) => word(point[i]?.[j] ?? "0");
  const g2 = (name: string, point: readonly (readonly string[])[]) => [
    { name: `${name}.x1`, word: at(point, 0, 1) },
    { name: `${name}.x2`, word: at(point, 0, 0) },
    { name: `${name}.y1`, word: at(point, 1, 1) },
    { name: `${name}.y2`, word: at(point, 1, 0) },
  ];
  const ic = key.IC.flatMap((point, i) => {
    const x = { name: `IC${i}.x`, word: word(point[0] ?? "0") };
    const y = { name: `IC${i}.y`, word: word(point[1] ?? "0") };
    return i === 0 ? [x, y] : [y, x];
  });
  return [
    ...ic,
    { name: "alpha.x", word: word(key.vk_alpha_1[0] ?? "0") },
    { name: "alpha.y", word: word(key.vk_alpha_1[1] ?? "0") },
    ...g2("beta", key.vk_beta_2),
    ...g2("gamma", key.vk_gamma_2),
    ...g2("delta", key.vk_delta_2),
  ];
}

/** The key's order of presentation in messages: alpha, beta, gamma, delta, IC0..ICn. */
const messageOrder = (name: string) => ["alpha", "beta", "gamma", "delta"].indexOf(name.split(".")[0] ?? "") >>> 0;

/**
 * How the code differs from the key: constants it does not push at all (`missing`), and, when it
 * pushes them all, the ones pushed elsewhere than the template puts them (`misplaced`, by name).
 */
export function compareKeyWithCode(key: VerifierKeyCoordinates, code: string): { total: number; missing: number; misplaced: string[] } {
  const expected = verificationKeyWords(key);
  const words = new Set(expected.map((c) => c.word));
  const pushed = push32Operands(code.toLowerCase()).filter((w) => words.has(w));
  const present = new Set(pushed);
  const missing = expected.filter((c) => !present.has(c.word)).length;
  if (missing > 0) return { total: expected.length, missing, misplaced: [] };
  const misplaced = expected.filter((c, i) => pushed[i] !== c.word).map((c) => c.name);
  if (pushed.length > expected.length && misplaced.length === 0) misplaced.push("(pushed more than once)");
  misplaced.sort((a, b) => messageOrder(a) - messageOrder(b) || a.localeCompare(b, "en", { numeric: true }));
  return { total: expected.length, missing, misplaced };
}
