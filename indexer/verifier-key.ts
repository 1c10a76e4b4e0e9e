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
import { compareKeyWithCode } from "../zk/verifier-key-words.ts";
import { DEV_CHAIN_IDS, type NetworkConfig } from "./config.ts";
import { IndexerConfigError } from "./errors.ts";
import type { VerificationKeyFile } from "./proofs.ts";
import type { ChainRpc } from "./rpc.ts";

export { compareKeyWithCode, push32Operands, verificationKeyWords, type KeyConstant } from "../zk/verifier-key-words.ts";

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
