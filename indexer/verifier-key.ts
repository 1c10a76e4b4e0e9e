/**
 * Start-up check that a network's configured verification key is the one its deployed
 * Groth16Verifier holds. The snarkjs Solidity template (zk/artifacts/Groth16Verifier.sol) declares
 * every key coordinate as a `uint256 constant` (alpha, beta, gamma, delta, IC), and solc inlines
 * each as a PUSH32 (0x7f) of its 32-byte big-endian value into the runtime bytecode, optimised or
 * not. So the check reads the contract's code (eth_getCode) and looks for every coordinate as a
 * byte-aligned PUSH32 operand. The verifier checked is the one BetVault calls (`verifier()`), so a
 * configured address that merely holds the key, but judges nothing on chain, is refused too.
 *
 * Why not call verifyProof on a known-good proof: a fixture proof exists only for the DEV key, so
 * that would prove nothing for a network's own key; the bytecode words work for any key and need
 * no proof. A verifier built another way (not the snarkjs template) fails the check: that is the
 * safe side — the service would otherwise judge proofs with a key the chain does not use.
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
const PUSH32 = "7f";

/** Whether `code` (lowercase hex, 0x-prefixed) holds `word` as the operand of a byte-aligned PUSH32. */
function pushesWord(code: string, word: string): boolean {
  const needle = PUSH32 + word;
  for (let at = code.indexOf(needle); at !== -1; at = code.indexOf(needle, at + 1)) {
    if (at % 2 === 0) return true; // "0x" is 2 characters: an even offset starts a byte
  }
  return false;
}

/** Every coordinate of the key as a 64-hex-digit word: alpha (2), beta, gamma, delta (4 each), IC (2 each). */
export function verificationKeyWords(key: Groth16VerificationKey): string[] {
  const g1 = (point: readonly string[]) => point.slice(0, 2).map(word);
  const g2 = (point: readonly (readonly string[])[]) => point.slice(0, 2).flatMap((pair) => pair.slice(0, 2).map(word));
  return [...g1(key.vk_alpha_1), ...g2(key.vk_beta_2), ...g2(key.vk_gamma_2), ...g2(key.vk_delta_2), ...key.IC.flatMap(g1)];
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
  const words = verificationKeyWords(key.key);
  const missing = code.length <= 2 ? words.length : words.filter((w) => !pushesWord(code, w)).length;
  if (missing > 0) {
    const what =
      code.length <= 2
        ? `the Groth16Verifier ${verifier} of ${where} has no contract code`
        : `the Groth16Verifier ${verifier} of ${where} does not hold the configured verification key (${missing} of ${words.length} constants differ)`;
    return refuse(what, `verificationKeyPath ${network.verificationKeyPath} must be the key the deployed verifier was generated from`, { missing });
  }
  if (called.toLowerCase() !== verifier.toLowerCase()) {
    const what = `BetVault ${network.contracts.BetVault.address} of ${where} calls the verifier ${called}, not the configured Groth16Verifier ${verifier}`;
    return refuse(what, "contracts.Groth16Verifier.address must be BetVault's verifier()", { called });
  }
  logger.info({ chainId: network.chainId, verifier, keySha256: key.sha256 }, "the deployed verifier holds the configured verification key");
}
