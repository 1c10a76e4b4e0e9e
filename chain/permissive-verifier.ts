/**
 * DEMO AND TEST ONLY: deploys chain/contracts/test/PermissiveVerifier.sol, a Groth16 "verifier" that
 * accepts every proof, on a local chain. `npm start`'s second demo chain (1337) builds its BetVault
 * against it, so bets settled with bad proofs reach the chain, as they would through a buggy or
 * compromised verifier contract, and the service shows them as `verified: false`. Never on a real network.
 */
import { readFileSync } from "node:fs";
import { parseAbi, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { fetchChainId, localChain, publicClientFor, walletClientFor } from "./clients.ts";
import { solcCompile } from "./compile.ts";
import { DEV_OPERATOR_KEY } from "./devAccounts.ts";

const abi = parseAbi(["function verifyProof(uint256[2], uint256[2][2], uint256[2], uint256[4]) pure returns (bool)"]);

export async function deployPermissiveVerifier(options: { rpcUrl: string; deployerPrivateKey?: Hex }): Promise<Address> {
  const file = "PermissiveVerifier.sol";
  const source = readFileSync(new URL(`./contracts/test/${file}`, import.meta.url), "utf8");
  const out = solcCompile({ [file]: source }).contracts[file]?.PermissiveVerifier;
  if (!out) throw new Error("PermissiveVerifier did not compile");
  const chain = localChain(await fetchChainId(options.rpcUrl), options.rpcUrl);
  const wallet = walletClientFor(chain, options.rpcUrl, privateKeyToAccount(options.deployerPrivateKey ?? DEV_OPERATOR_KEY), { pollingInterval: 50 });
  const hash = await wallet.deployContract({ abi, bytecode: `0x${out.evm.bytecode.object}` as Hex });
  const receipt = await publicClientFor(chain, options.rpcUrl, { pollingInterval: 50 }).waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error("PermissiveVerifier deployment failed");
  return receipt.contractAddress;
}
