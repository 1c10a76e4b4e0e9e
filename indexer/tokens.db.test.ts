// Bet.tokenInfo's source: the indexer reads each token's symbol() and decimals() from the chain
// once (never again, across commits and restarts), writes the Token row with the first bet in it,
// takes the native coin from the network's nativeCurrency, and stores a fallback for a token whose
// calls revert instead of stalling. BetVault emits only the native coin, so the network's BetVault
// here is a BetEmitter (chain/contracts/test/) that emits BetPlaced in any token; RPC calls are
// counted by a proxy in front of anvil (test/lagging-rpc.ts).
import { getAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicClientFor, walletClientFor, localChain } from "../chain/clients.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { createLogger } from "../core/logger.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { testConfig } from "../test/config.ts";
import { betEmitterAbi, deployBetEmitter, deployTestToken, type TestTokenKind } from "../test/contracts.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { startLaggingRpc, type LaggingRpc } from "../test/lagging-rpc.ts";
import type { NetworkConfig } from "./config.ts";
import { createIndexer } from "./indexer.ts";

const logger = createLogger({ level: testConfig.TEST_LOG_LEVEL, name: "indexer-test" });
const NATIVE = "0x0000000000000000000000000000000000000000";
const NO_CODE = "0x000000000000000000000000000000000000dead";
let chain: TestChain;
let proxy: LaggingRpc;
let db: TestDatabase;
let network: NetworkConfig;
let emitter: Address;
const tokens: Record<string, Address> = {};

async function place(token: string, stake = 1_000n): Promise<void> {
  const rpcUrl = chain.anvil.rpcUrl;
  const wallet = walletClientFor(localChain(chain.anvil.chainId, rpcUrl), rpcUrl, privateKeyToAccount(DEV_PRIVATE_KEYS[3] as Hex));
  const hash = await wallet.writeContract({ address: emitter, abi: betEmitterAbi, functionName: "place", args: [getAddress(token), stake] });
  await publicClientFor(localChain(chain.anvil.chainId, rpcUrl), rpcUrl, { pollingInterval: 20 }).waitForTransactionReceipt({ hash });
}

async function indexOnce(): Promise<void> {
  const indexer = createIndexer({ db, logger, networks: [network] });
  try {
    await indexer.start();
    await indexer.synced();
  } finally {
    await indexer.stop();
  }
}

/** eth_call requests to `address` the proxy has seen. */
const callsTo = (address: string) =>
  proxy.requests().filter((r) => r.method === "eth_call" && (r.params[0] as { to?: string } | undefined)?.to?.toLowerCase() === address.toLowerCase());

beforeAll(async () => {
  chain = await startTestChain({ permissive: true });
  await chain.test.setAutomine(true);
  const rpcUrl = chain.anvil.rpcUrl;
  const deployToken = (symbol: string, decimals: number, kind?: TestTokenKind) => deployTestToken({ rpcUrl, symbol, decimals, kind });
  tokens.usdc = await deployToken("USDC", 6);
  tokens.mkr = await deployToken("MKR", 18, "bytes32-symbol");
  tokens.noSymbol = await deployToken("BAD", 8, "reverting-symbol");
  tokens.noDecimals = await deployToken("NODEC", 0, "reverting-decimals");
  emitter = await deployBetEmitter({ rpcUrl });
  const deployBlock = await chain.pub.getBlockNumber();
  proxy = await startLaggingRpc(rpcUrl);
  const base = chain.network({ rpc: { http: proxy.url }, nativeCurrency: { symbol: "TST", decimals: 9 } });
  network = { ...base, contracts: { ...base.contracts, BetVault: { address: emitter.toLowerCase() as Address, deployBlock } } };
  db = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await db?.close();
  await proxy?.close();
  await chain?.stop();
});

describe("token metadata", () => {
  it("reads symbol() and decimals() of each token once, with the first bet in it, and the native coin from the configuration", async () => {
    await place(tokens.usdc!);
    await place(NATIVE);
    await place(tokens.usdc!);
    await place(tokens.mkr!);
    await indexOnce();
    // A later bet in a known token (the follow loop of a new run) reads nothing again.
    await place(tokens.usdc!, 5n);
    await place(NATIVE, 6n);
    await indexOnce();

    const rows = await db.prisma.token.findMany({ orderBy: { address: "asc" } });
    const byAddress = new Map(rows.map((r) => [r.address, { symbol: r.symbol, decimals: r.decimals }]));
    expect(byAddress.get(tokens.usdc!.toLowerCase())).toEqual({ symbol: "USDC", decimals: 6 });
    expect(byAddress.get(tokens.mkr!.toLowerCase())).toEqual({ symbol: "MKR", decimals: 18 });
    expect(byAddress.get(NATIVE)).toEqual({ symbol: "TST", decimals: 9 });
    expect(rows).toHaveLength(3);

    expect(callsTo(tokens.usdc!)).toHaveLength(2); // symbol() and decimals(), once
    expect(callsTo(tokens.mkr!)).toHaveLength(2);
    expect(callsTo(NATIVE)).toHaveLength(0);
    expect(await db.prisma.bet.count()).toBe(6);
  });

  it("stores the documented fallback for a token whose calls revert or that has no code, without stalling", async () => {
    await place(tokens.noSymbol!);
    await place(tokens.noDecimals!);
    await place(NO_CODE);
    await place(tokens.usdc!, 7n);
    await indexOnce();

    const token = (address: string) => db.prisma.token.findUniqueOrThrow({ where: { chainId_address: { chainId: 31337n, address: address.toLowerCase() } } });
    expect(await token(tokens.noSymbol!)).toMatchObject({ symbol: "UNKNOWN", decimals: 8 });
    expect(await token(tokens.noDecimals!)).toMatchObject({ symbol: "NODEC", decimals: 0 });
    expect(await token(NO_CODE)).toMatchObject({ symbol: "UNKNOWN", decimals: 0 });
    expect(await db.prisma.bet.count()).toBe(10);
    // Read once each, fallback or not.
    expect(callsTo(tokens.noSymbol!)).toHaveLength(2);
    expect(callsTo(NO_CODE)).toHaveLength(2);
    expect(callsTo(tokens.usdc!)).toHaveLength(2);
  });

  it("retries a call the node fails to answer (not a revert) instead of storing the fallback", async () => {
    const flaky = await deployTestToken({ rpcUrl: chain.anvil.rpcUrl, symbol: "FLKY", decimals: 4 });
    await place(flaky);
    proxy.failNext("eth_call", 6);
    await indexOnce();
    const row = await db.prisma.token.findUniqueOrThrow({ where: { chainId_address: { chainId: 31337n, address: flaky.toLowerCase() } } });
    expect(row).toMatchObject({ symbol: "FLKY", decimals: 4 });
    expect(callsTo(flaky).length).toBeGreaterThan(2);
  });

  it("leaves no bet without its token row", async () => {
    const orphans = await db.prisma.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM "Bet" b LEFT JOIN "Token" t ON t."chainId" = b."chainId" AND t.address = b.token WHERE t.address IS NULL`;
    expect(Number(orphans[0]?.n)).toBe(0);
  });

  it("rewrites the native coin's row from the configuration at start", async () => {
    network = { ...network, nativeCurrency: { symbol: "TST2", decimals: 12 } };
    await indexOnce();
    const row = await db.prisma.token.findUniqueOrThrow({ where: { chainId_address: { chainId: 31337n, address: NATIVE } } });
    expect(row).toMatchObject({ symbol: "TST2", decimals: 12 });
  });
});
