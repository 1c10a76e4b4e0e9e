/**
 * Start-up check that a network's configured verification key is the one its deployed
 * Groth16Verifier holds, constant for constant and in place. The snarkjs Solidity template
 * (zk/artifacts/Groth16Verifier.sol) declares every key coordinate as a `uint256 constant`, and
 * solc inlines each as a PUSH32 (0x7f) of its 32-byte big-endian value where it is used. So the
 * check reads the contract's code (eth_getCode), walks its instructions, and compares the key's
 * constants in the order the verifier pushes them (templateOrder below) with the PUSH32 operands of
 * the code. "Each constant somewhere in the code" is not enough: a key with γ and δ swapped, or IC
 * points permuted, holds the same 24 numbers, and would judge every proof differently from the chain.
 * The verifier checked is the one BetVault calls (`verifier()`), so a configured address that merely
 * holds the key, but judges nothing on chain, is refused too.
 *
 * Why not call verifyProof on a known-good proof: a fixture proof exists only for the DEV key, so
 * that would prove nothing for a network's own key; the bytecode words work for any key and need
 * no proof. A verifier built another way (not the snarkjs template, or compiled into another order)
 * fails the check: that is the safe side — the service would otherwise judge proofs with a key the
 * chain does not use.
 *
 * On a local development chain (31337/1337) a mismatch is only a warning: tests deploy verifiers
 * that accept every proof. Anywhere else it is an IndexerConfigError and the service does not start.
 */
import type { Logger } from "../core/logger.ts";
import type { Groth16VerificationKey } from "../zk/groth16.ts";
import { DEV_CHAIN_IDS, type NetworkConfig } from "./config.ts";
import { IndexerConfigError } from "./errors.ts";
import type { VerificationKeyFile } from "./proofs.ts";
import type { ChainRpc } from "./rpc.ts";

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
export function verificationKeyWords(key: Groth16VerificationKey): KeyConstant[] {
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
export function compareKeyWithCode(key: Groth16VerificationKey, code: string): { total: number; missing: number; misplaced: string[] } {
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

export interface VerifierKeyCheck {
  network: NetworkConfig;
  rpc: Pick<ChainRpc, "code" | "betVaultVerifier">;
  key: VerificationKeyFile;
  logger: Logger;
}

/** Resolves when the deployed verifier holds the key (or, on a development chain, after a warning). */
export async function checkVerifierKey({ network, rpc, key, logger }: VerifierKeyCheck): Promise<void> {
  const verifier = network.contracts.Groth16Verifier.address;
  const dev = DEV_CHAIN_IDS.has(network.chainId);
  let code: string;
  let called: string;
  try {
    called = await rpc.betVaultVerifier();
    code = (await rpc.code(verifier)).toLowerCase();
  } catch (error) {
    // A development chain may come up after the indexer; a real network's key is checked or nothing starts.
    if (!dev) throw error;
    logger.warn(
      { chainId: network.chainId, verifier, err: error instanceof Error ? error.message : String(error) },
      "verification key not checked: the RPC node did not answer",
    );
    return;
  }
  const where = `network ${network.name} (chain ${network.chainId})`;
  const refuse = (what: string, fix: string, fields: Record<string, unknown>) => {
    if (!dev) throw new IndexerConfigError(`${what}: ${fix}`, { chainId: network.chainId });
    logger.warn({ chainId: network.chainId, verifier, ...fields }, `${what}: development chain, continuing (check the verification key)`);
  };
  const { total, missing, misplaced } = code.length <= 2 ? { total: 0, missing: 1, misplaced: [] } : compareKeyWithCode(key.key, code);
  if (missing > 0 || misplaced.length > 0) {
    const what =
      code.length <= 2
        ? `the Groth16Verifier ${verifier} of ${where} has no contract code`
        : missing > 0
          ? `the Groth16Verifier ${verifier} of ${where} does not hold the configured verification key (${missing} of ${total} constants differ)`
          : `the Groth16Verifier ${verifier} of ${where} holds the configured verification key's constants in another order (${misplaced.length} of ${total} constants out of place: ${misplaced.join(", ")})`;
    return refuse(what, `verificationKeyPath ${network.verificationKeyPath} must be the key the deployed verifier was generated from`, {
      missing,
      misplaced,
    });
  }
  if (called.toLowerCase() !== verifier.toLowerCase()) {
    const what = `BetVault ${network.contracts.BetVault.address} of ${where} calls the verifier ${called}, not the configured Groth16Verifier ${verifier}`;
    return refuse(what, "contracts.Groth16Verifier.address must be BetVault's verifier()", { called });
  }
  logger.info({ chainId: network.chainId, verifier, keySha256: key.sha256 }, "the deployed verifier holds the configured verification key");
}
