/**
 * Deploys Groth16Verifier + BetVault with viem and funds the bankroll. Defaults use anvil's
 * well-known DEV keys (chain/devAccounts.ts): local development only.
 */
import { parseEther, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { fetchChainId, localChain, publicClientFor, walletClientFor } from "./clients.ts";
import { DEV_OPERATOR_KEY } from "./devAccounts.ts";
import { betVaultAbi, betVaultBytecode, groth16VerifierAbi, groth16VerifierBytecode } from "./generated/artifacts.ts";

export interface DeployOptions {
  rpcUrl: string;
  /** Read from the node when omitted. */
  chainId?: number;
  /** Deploys, funds the bankroll and operates the vault. Default: dev account 0 (DEV KEY). */
  operatorPrivateKey?: Hex;
  /** Seconds a bet may wait for settlement before anyone may refund it. Default 300. */
  settleTimeoutSeconds?: number;
  /** Native coin sent to the vault as bankroll. Default 1000 ether. */
  bankroll?: bigint;
  /**
   * Deploy BetVault against this already-deployed verifier instead of deploying Groth16Verifier
   * (tests and benchmarks: a permissive verifier from test/contracts.ts).
   */
  verifier?: Address;
}

export interface BetSystem {
  chainId: number;
  rpcUrl: string;
  betVault: Address;
  verifier: Address;
  /** Block of the BetVault deployment: where an indexer starts. */
  deployBlock: bigint;
  settleTimeoutSeconds: number;
  operator: { address: Address; privateKey: Hex };
}

export async function deployBetSystem(options: DeployOptions): Promise<BetSystem> {
  const chainId = options.chainId ?? (await fetchChainId(options.rpcUrl));
  const chain = localChain(chainId, options.rpcUrl);
  const privateKey = options.operatorPrivateKey ?? DEV_OPERATOR_KEY;
  const account = privateKeyToAccount(privateKey);
  const publicClient = publicClientFor(chain, options.rpcUrl, { pollingInterval: 50 });
  const wallet = walletClientFor(chain, options.rpcUrl, account, { pollingInterval: 50 });
  const settleTimeoutSeconds = options.settleTimeoutSeconds ?? 300;

  let verifier = options.verifier;
  if (!verifier) {
    const verifierHash = await wallet.deployContract({ abi: groth16VerifierAbi, bytecode: groth16VerifierBytecode });
    const verifierReceipt = await publicClient.waitForTransactionReceipt({ hash: verifierHash });
    if (verifierReceipt.status !== "success" || !verifierReceipt.contractAddress) throw new Error("verifier deployment failed");
    verifier = verifierReceipt.contractAddress;
  }

  const vaultHash = await wallet.deployContract({
    abi: betVaultAbi,
    bytecode: betVaultBytecode,
    args: [verifier, account.address, BigInt(settleTimeoutSeconds)],
    value: options.bankroll ?? parseEther("1000"),
  });
  const vaultReceipt = await publicClient.waitForTransactionReceipt({ hash: vaultHash });
  if (vaultReceipt.status !== "success" || !vaultReceipt.contractAddress) throw new Error("BetVault deployment failed");

  return {
    chainId,
    rpcUrl: options.rpcUrl,
    betVault: vaultReceipt.contractAddress,
    verifier,
    deployBlock: vaultReceipt.blockNumber,
    settleTimeoutSeconds,
    operator: { address: account.address, privateKey },
  };
}
