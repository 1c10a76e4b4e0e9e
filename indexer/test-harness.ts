/**
 * The indexer tests' shared harness: an anvil with a deployed BetVault (real Groth16 verifier, or a
 * permissive one), a driver that places, settles (real proofs) and refunds bets in blocks it mines
 * itself (automine off), and table snapshots to compare databases. Test code only.
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
import { startAnvil, type AnvilInstance } from "../chain/anvil.ts";
import { FIELD_SIZE, SETTLE_GAS, fieldToBytes32, parseSolidityCalldata, type GameId, type SolidityProof } from "../chain/betvault.ts";
import { localChain } from "../chain/clients.ts";
import { deployBetSystem, type BetSystem } from "../chain/deploy.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { deployPermissiveVerifier } from "../chain/test-contracts.ts";
import type { Database } from "../core/db.ts";
import { proveBetOutcome, serverSeedCommitment } from "../zk/groth16.ts";
import { networkFromDeployment, type NetworkConfig, type NetworkInput } from "./config.ts";

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
  const anvil = await startAnvil({ chainId: options.chainId });
  try {
    const verifier = options.permissive ? await deployPermissiveVerifier({ rpcUrl: anvil.rpcUrl, deployerPrivateKey: options.operatorKey }) : undefined;
    const sys = await deployBetSystem({ rpcUrl: anvil.rpcUrl, settleTimeoutSeconds: options.settleTimeoutSeconds ?? 600, verifier, operatorPrivateKey: options.operatorKey });
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
        const base = networkFromDeployment(sys, { name: `localnet-${anvil.chainId}`, wsUrl: anvil.wsUrl, confirmations: 2, pollingIntervalMs: 50, ...rest });
        return rpc ? { ...base, rpc: rpc.ws ? { http: rpc.http, ws: rpc.ws } : { http: rpc.http } } : base;
      },
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/** `network` as the JSON of a networks file (NETWORKS_CONFIG) that `indexer/main.ts` accepts. */
export function networksFileJson(network: NetworkConfig, extra: { batchSize?: number } = {}): string {
  const { contracts } = network;
  return JSON.stringify({
    networks: [
      {
        chainId: network.chainId,
        name: network.name,
        rpc: network.rpc,
        confirmations: network.confirmations,
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
  private clientSeedCounter = 0;

  constructor(
    chain: Chain,
    rpcUrl: string,
    private readonly sys: BetSystem,
    private readonly pub: PublicClient<Transport, Chain>,
    private readonly test: TestClient<"anvil", Transport, Chain>,
  ) {
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
      while (seed === 0n || seed >= FIELD_SIZE) seed = BigInt(`0x${randomBytes(31).toString("hex")}`);
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
    this.clientSeedCounter++;
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

// ------------------------------------------------------------------------------ comparisons

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

/** Rows as plain JSON: bigints and decimals as decimal strings. */
function plain(value: unknown): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return value.toString(10);
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && "toFixed" in value && typeof (value as { toFixed: unknown }).toFixed === "function") {
    return (value as { toFixed(d: number): string }).toFixed(0);
  }
  const out: { [key: string]: Plain } = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = plain(v);
  return out;
}

export interface TableSnapshot {
  bets: Plain[];
  results: Plain[];
  /** Outbox rows in seq order, without seq and createdAt. */
  updates: Plain[];
}

/**
 * The indexed tables of a database, for equality checks. `withDepth: false` drops the payloads'
 * `confirmations` / `finalized` (a snapshot of the head at commit time, which differs between a
 * live run and a backfill of the same chain).
 */
export async function snapshotTables(db: Database, options: { withDepth?: boolean } = {}): Promise<TableSnapshot> {
  const bets = await db.prisma.bet.findMany({ orderBy: [{ chainId: "asc" }, { betId: "asc" }] });
  const results = await db.prisma.betResult.findMany({ orderBy: [{ chainId: "asc" }, { betId: "asc" }] });
  const updates = await db.prisma.betUpdate.findMany({ orderBy: { seq: "asc" } });
  return {
    bets: bets.map(plain),
    results: results.map(plain),
    updates: updates.map(({ seq: _seq, createdAt: _createdAt, bet, ...row }) => {
      const payload = { ...(bet as Record<string, unknown>) };
      if (options.withDepth === false) {
        delete payload.confirmations;
        delete payload.finalized;
      }
      return plain({ ...row, bet: payload });
    }),
  };
}

/** The last outbox row of every bet (as snapshotTables lays rows out), keyed by chainId:betId. */
export function lastUpdates(snapshot: TableSnapshot): Map<string, Plain> {
  const out = new Map<string, Plain>();
  for (const row of snapshot.updates) {
    const r = row as { chainId: string; betId: string };
    out.set(`${r.chainId}:${r.betId}`, row);
  }
  return out;
}

/** Seq values of the outbox, in order. */
export async function outboxSeqs(db: Database): Promise<bigint[]> {
  return (await db.prisma.betUpdate.findMany({ select: { seq: true }, orderBy: { seq: "asc" } })).map((r) => r.seq);
}
