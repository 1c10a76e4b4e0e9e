/**
 * The chain harness of tests: a local chain (chain/local.ts: anvil + BetVault against the real
 * Groth16 verifier, or a permissive one) with automine off, and a driver that places, settles (real
 * proofs) and refunds bets in blocks it mines itself. Table snapshots to compare databases are in
 * test/tables.ts.
 */
import { randomBytes } from "node:crypto";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEventLogs,
  toHex,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type JsonRpcAccount,
  type PublicClient,
  type TestClient,
  type Transport,
  type TransactionReceipt,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { AnvilInstance } from "../chain/anvil.ts";
import { SETTLE_GAS, fieldToBytes32, parseSolidityCalldata, type GameId, type SolidityProof } from "../chain/betvault.ts";
import { localChain } from "../chain/clients.ts";
import type { BetSystem } from "../chain/deploy.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { startLocalChain } from "../chain/local.ts";
import { deployPermissiveVerifier } from "./contracts.ts";
import { DEFAULT_VERIFICATION_KEY_PATH, networkFromDeployment, type NetworkConfig, type NetworkInput } from "../indexer/config.ts";
import { FIELD_MODULUS, proveBetOutcome, serverSeedCommitment } from "../zk/groth16.ts";

type Wallet = WalletClient<Transport, Chain, JsonRpcAccount>;

export interface TestChain {
  anvil: AnvilInstance;
  sys: BetSystem;
  pub: PublicClient<Transport, Chain>;
  test: TestClient<"anvil", Transport, Chain>;
  driver: BetDriver;
  /** A NetworkConfig for this deployment (http + ws unless overridden). */
  network(overrides?: Partial<NetworkInput>): NetworkConfig;
  stop(): Promise<void>;
}

export interface TestChainOptions {
  /** Deploy BetVault against a verifier that accepts any proof. */
  permissive?: boolean;
  /** Default 600 s. */
  settleTimeoutSeconds?: number;
  /** Default 31337. */
  chainId?: number;
  /** Deployer and operator (a DEV key). Default: dev account 0. */
  operatorKey?: Hex;
}

export async function startTestChain(options: TestChainOptions = {}): Promise<TestChain> {
  const { anvil, system: sys } = await startLocalChain({
    anvil: { chainId: options.chainId },
    deploy: { settleTimeoutSeconds: options.settleTimeoutSeconds ?? 600, operatorPrivateKey: options.operatorKey },
    ...(options.permissive ? { verifier: (rpcUrl: string) => deployPermissiveVerifier({ rpcUrl, deployerPrivateKey: options.operatorKey }) } : {}),
  });
  try {
    const chain = localChain(anvil.chainId, anvil.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), cacheTime: 0, pollingInterval: 20 });
    const test = createTestClient({ mode: "anvil", chain, transport: http(anvil.rpcUrl) });
    await test.setAutomine(false);
    const driver = new BetDriver(chain, anvil.rpcUrl, sys, pub, test);
    return {
      anvil,
      sys,
      pub,
      test,
      driver,
      network: (overrides = {}) => {
        const { rpc, ...rest } = overrides;
        // The deployed verifier is the DEV key's (or permissive): name the key, so a chain id other
        // than 31337/1337 is accepted too.
        const base = networkFromDeployment(sys, {
          name: `localnet-${anvil.chainId}`,
          wsUrl: anvil.wsUrl,
          confirmations: 2,
          pollingIntervalMs: 50,
          verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH,
          ...rest,
        });
        return rpc ? { ...base, rpc: { http: rpc.http, ...(rpc.ws ? { ws: rpc.ws } : {}), ...(rpc.fallback ? { fallback: rpc.fallback } : {}) } } : base;
      },
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/** `network` as the JSON of a networks file (NETWORKS_CONFIG) that `bin/indexer.ts` accepts. */
export function networksFileJson(network: NetworkConfig, extra: { batchSize?: number } = {}): string {
  const { contracts } = network;
  return JSON.stringify({
    networks: [
      {
        chainId: network.chainId,
        name: network.name,
        rpc: network.rpc,
        confirmations: network.confirmations,
        verificationKeyPath: network.verificationKeyPath,
        ...extra,
        contracts: {
          BetVault: { address: contracts.BetVault.address, deployBlock: contracts.BetVault.deployBlock.toString() },
          Groth16Verifier: { address: contracts.Groth16Verifier.address, deployBlock: contracts.Groth16Verifier.deployBlock.toString() },
        },
      },
    ],
  });
}

/** Sends BetVault transactions from anvil's unlocked dev accounts and mines them when told to. */
export class BetDriver {
  private readonly seeds = new Map<Hex, bigint>();
  private pending: Hash[] = [];
  private readonly operator: Wallet;
  private readonly players: Wallet[];

  private readonly sys: BetSystem;
  private readonly pub: PublicClient<Transport, Chain>;
  private readonly test: TestClient<"anvil", Transport, Chain>;
  constructor(chain: Chain, rpcUrl: string, sys: BetSystem, pub: PublicClient<Transport, Chain>, test: TestClient<"anvil", Transport, Chain>) {
    this.sys = sys;
    this.pub = pub;
    this.test = test;
    const wallet = (key: Hex): Wallet =>
      createWalletClient({ chain, transport: http(rpcUrl), account: { address: privateKeyToAccount(key).address, type: "json-rpc" } });
    this.operator = wallet(sys.operator.privateKey);
    this.players = DEV_PRIVATE_KEYS.slice(1).map(wallet);
  }

  private get vault() {
    return { address: this.sys.betVault, abi: betVaultAbi } as const;
  }

  private player(index: number): Wallet {
    const w = this.players[index % this.players.length];
    if (!w) throw new Error("no player");
    return w;
  }

  /** Queues `count` commitments (a bet may only take one published in an earlier block). */
  async publish(count: number): Promise<void> {
    const hashes: Hex[] = [];
    for (let i = 0; i < count; i++) {
      let seed = 0n;
      while (seed === 0n || seed >= FIELD_MODULUS) seed = BigInt(`0x${randomBytes(31).toString("hex")}`);
      const commitment = fieldToBytes32(serverSeedCommitment(seed));
      this.seeds.set(commitment, seed);
      hashes.push(commitment);
    }
    this.pending.push(
      await this.operator.writeContract({ ...this.vault, functionName: "publishCommitments", args: [hashes], gas: 60_000n + 75_000n * BigInt(count) }),
    );
  }

  /** Queues a bet; its id is known once mined (see mine()). */
  async place(playerIndex: number, options: { game?: GameId; stake?: bigint; clientSeed?: Hex } = {}): Promise<void> {
    const clientSeed = options.clientSeed ?? toHex(randomBytes(32));
    this.pending.push(
      await this.player(playerIndex).writeContract({
        ...this.vault,
        functionName: "placeBet",
        args: [options.game ?? "coinflip", clientSeed, `0x${"00".repeat(32)}`],
        value: options.stake ?? 10n ** 15n,
        gas: 300_000n,
      }),
    );
  }

  /** A real proof of a mined bet's outcome (its seed must come from this driver). */
  async prove(betId: bigint): Promise<{ outcome: bigint; proof: SolidityProof }> {
    const bet = await this.pub.readContract({ ...this.vault, functionName: "getBet", args: [betId] });
    const seed = this.seeds.get(bet.serverSeedHash.toLowerCase() as Hex);
    if (seed === undefined) throw new Error(`no seed for bet ${betId}`);
    const proved = await proveBetOutcome({ serverSeed: seed, betId, clientSeed: bet.clientSeed, serverSeedHash: bet.serverSeedHash });
    const { pA, pB, pC } = parseSolidityCalldata(proved.solidityCalldata);
    return { outcome: BigInt(proved.outcome), proof: { pA, pB, pC } };
  }

  /** Queues a settlement: a real proof, or whatever `proof` gives (a permissive verifier accepts anything). */
  async settle(betId: bigint, proof?: { outcome: bigint; proof: SolidityProof }): Promise<void> {
    const p = proof ?? (await this.prove(betId));
    this.pending.push(
      await this.operator.writeContract({
        ...this.vault,
        functionName: "settleBet",
        args: [betId, p.outcome, p.proof.pA, p.proof.pB, p.proof.pC],
        gas: SETTLE_GAS,
      }),
    );
  }

  async refund(betId: bigint): Promise<void> {
    this.pending.push(await this.operator.writeContract({ ...this.vault, functionName: "refundBet", args: [betId], gas: 150_000n }));
  }

  /**
   * Mines one block with every queued transaction (after moving time forward `advanceSeconds`);
   * throws if one reverted. Returns the block number and the ids of the bets it placed.
   */
  async mine(advanceSeconds = 0): Promise<{ block: bigint; placed: bigint[]; receipts: TransactionReceipt[] }> {
    if (advanceSeconds > 0) await this.test.increaseTime({ seconds: advanceSeconds });
    await this.test.mine({ blocks: 1 });
    const hashes = this.pending;
    this.pending = [];
    const receipts = await Promise.all(hashes.map((hash) => this.pub.getTransactionReceipt({ hash })));
    const failed = receipts.filter((r) => r.status !== "success");
    if (failed.length > 0) throw new Error(`${failed.length} transaction(s) reverted in the mined block`);
    const placed = parseEventLogs({ abi: betVaultAbi, eventName: "BetPlaced", logs: receipts.flatMap((r) => r.logs) }).map((e) => e.args.betId);
    return { block: await this.pub.getBlockNumber(), placed, receipts };
  }

  /** Mines empty blocks. */
  async mineEmpty(blocks: number): Promise<void> {
    await this.test.mine({ blocks });
  }

  /** Publishes `count` commitments and mines them (so the next block may place that many bets). */
  async ensureCommitments(count: number): Promise<void> {
    const available = await this.pub.readContract({ ...this.vault, functionName: "availableCommitments" });
    if (available >= BigInt(count)) return;
    await this.publish(count - Number(available));
    await this.mine();
  }

  get address(): Address {
    return this.sys.betVault;
  }
}
