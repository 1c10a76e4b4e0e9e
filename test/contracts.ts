/**
 * TEST/BENCH-ONLY contracts (chain/contracts/test/), compiled on demand with solc-js and deployed
 * with viem: a permissive Groth16 verifier (accepts any proof) and a batcher that places, settles
 * and refunds many bets per transaction. Never deploy them on a real network.
 *
 * The ABIs are written here in human-readable form so viem types every call;
 * contracts.test.ts checks them against the compiler's output.
 */
import { readFileSync } from "node:fs";
import { parseAbi, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { fetchChainId, localChain, publicClientFor, walletClientFor } from "../chain/clients.ts";
import { solcCompile } from "../chain/compile.ts";
import { DEV_OPERATOR_KEY } from "../chain/devAccounts.ts";

export const permissiveVerifierAbi = parseAbi(["function verifyProof(uint256[2], uint256[2][2], uint256[2], uint256[4]) pure returns (bool)"]);

export const betBatcherAbi = parseAbi([
  "constructor(address vault_)",
  "function vault() view returns (address)",
  "function placeMany(string game, uint256 count, uint256 stake, bytes32 seedBase) payable",
  "function settleMany(uint256[] betIds, uint256[] outcomes, uint256[2] pA, uint256[2][2] pB, uint256[2] pC)",
  "function refundMany(uint256[] betIds)",
  "receive() external payable",
]);

export const TEST_CONTRACTS = {
  PermissiveVerifier: { file: "PermissiveVerifier.sol", abi: permissiveVerifierAbi },
  BetBatcher: { file: "BetBatcher.sol", abi: betBatcherAbi },
} as const;
export type TestContractName = keyof typeof TEST_CONTRACTS;

const compiled = new Map<TestContractName, { abi: unknown[]; bytecode: Hex }>();

/** solc-js output of one test contract (memoised: ~1 s per contract the first time). */
export function compileTestContract(name: TestContractName): { abi: unknown[]; bytecode: Hex } {
  const cached = compiled.get(name);
  if (cached) return cached;
  const { file } = TEST_CONTRACTS[name];
  const source = readFileSync(new URL(`../chain/contracts/test/${file}`, import.meta.url), "utf8");
  const out = solcCompile({ [file]: source }).contracts[file]?.[name];
  if (!out) throw new Error(`${name} did not compile`);
  const result = { abi: out.abi, bytecode: `0x${out.evm.bytecode.object}` as Hex };
  compiled.set(name, result);
  return result;
}

export interface TestDeployOptions {
  rpcUrl: string;
  /** Default: dev account 0 (DEV KEY). */
  deployerPrivateKey?: Hex;
}

async function deploy(name: TestContractName, options: TestDeployOptions, args: readonly Address[]): Promise<Address> {
  const chain = localChain(await fetchChainId(options.rpcUrl), options.rpcUrl);
  const account = privateKeyToAccount(options.deployerPrivateKey ?? DEV_OPERATOR_KEY);
  const wallet = walletClientFor(chain, options.rpcUrl, account, { pollingInterval: 50 });
  const pub = publicClientFor(chain, options.rpcUrl, { pollingInterval: 50 });
  const { bytecode } = compileTestContract(name);
  const hash =
    name === "BetBatcher"
      ? await wallet.deployContract({ abi: betBatcherAbi, bytecode, args: [args[0] ?? "0x"] as const })
      : await wallet.deployContract({ abi: permissiveVerifierAbi, bytecode });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`${name} deployment failed`);
  return receipt.contractAddress;
}

/** A verifier that accepts every proof: deploy BetVault against it with deployBetSystem({ verifier }). */
export function deployPermissiveVerifier(options: TestDeployOptions): Promise<Address> {
  return deploy("PermissiveVerifier", options, []);
}

/** A BetBatcher for `betVault` (it is the player of the bets it places). */
export function deployBetBatcher(options: TestDeployOptions & { betVault: Address }): Promise<Address> {
  return deploy("BetBatcher", options, [options.betVault]);
}
