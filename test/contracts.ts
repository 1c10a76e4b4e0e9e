/**
 * TEST/BENCH-ONLY contracts (chain/contracts/test/), compiled on demand with solc-js and deployed
 * with viem: a permissive Groth16 verifier (accepts any proof), a batcher that places, settles
 * and refunds many bets per transaction, an ERC-20 token's metadata calls (well-behaved or not) and
 * an emitter of BetPlaced events in any token. Never deploy them on a real network.
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

export const testTokenAbi = parseAbi([
  "constructor(string symbol_, uint8 decimals_, uint8 kind_)",
  "function decimals() view returns (uint8)",
  "fallback() external",
]);

export const betEmitterAbi = parseAbi([
  "event BetPlaced(uint256 indexed betId, address indexed player, address token, uint256 stake, string game, bytes32 clientSeed, bytes32 serverSeedHash, uint64 deadline)",
  "function nextBetId() view returns (uint256)",
  "function place(address token, uint256 stake)",
]);

export const TEST_CONTRACTS = {
  PermissiveVerifier: { file: "PermissiveVerifier.sol", abi: permissiveVerifierAbi },
  BetBatcher: { file: "BetBatcher.sol", abi: betBatcherAbi },
  TestToken: { file: "TestToken.sol", abi: testTokenAbi },
  BetEmitter: { file: "BetEmitter.sol", abi: betEmitterAbi },
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
  const { bytecode } = compileTestContract(name);
  return deployWith(name, options, (wallet) =>
    name === "BetBatcher"
      ? wallet.deployContract({ abi: betBatcherAbi, bytecode, args: [args[0] ?? "0x"] as const })
      : name === "BetEmitter"
        ? wallet.deployContract({ abi: betEmitterAbi, bytecode })
        : wallet.deployContract({ abi: permissiveVerifierAbi, bytecode }),
  );
}

async function deployWith(
  name: TestContractName,
  options: TestDeployOptions,
  send: (wallet: ReturnType<typeof walletClientFor>) => Promise<Hex>,
): Promise<Address> {
  const chain = localChain(await fetchChainId(options.rpcUrl), options.rpcUrl);
  const account = privateKeyToAccount(options.deployerPrivateKey ?? DEV_OPERATOR_KEY);
  const wallet = walletClientFor(chain, options.rpcUrl, account, { pollingInterval: 50 });
  const pub = publicClientFor(chain, options.rpcUrl, { pollingInterval: 50 });
  const hash = await send(wallet);
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

/** How a TestToken answers `symbol()` / `decimals()`. */
export type TestTokenKind = "erc20" | "bytes32-symbol" | "reverting-symbol" | "reverting-decimals";
const TOKEN_KINDS: Record<TestTokenKind, number> = { erc20: 0, "bytes32-symbol": 1, "reverting-symbol": 2, "reverting-decimals": 3 };

/** A TestToken: the metadata calls of an ERC-20 token (no balances), well-behaved or not. */
export function deployTestToken(options: TestDeployOptions & { symbol: string; decimals: number; kind?: TestTokenKind }): Promise<Address> {
  const { bytecode } = compileTestContract("TestToken");
  const args = [options.symbol, options.decimals, TOKEN_KINDS[options.kind ?? "erc20"]] as const;
  return deployWith("TestToken", options, (wallet) => wallet.deployContract({ abi: testTokenAbi, bytecode, args }));
}

/** A BetEmitter: point a network's BetVault at it to index BetPlaced events in any token. */
export function deployBetEmitter(options: TestDeployOptions): Promise<Address> {
  return deploy("BetEmitter", options, []);
}
