/**
 * The operator simulator: the off-chain resolver of BetVault plus a crowd of simulated players.
 *
 * Each step it (1) keeps a buffer of server-seed commitments published on-chain, (2) has random
 * players place bets with random games, stakes and client seeds, (3) proves and settles most of them
 * (settleRatio) and abandons the rest, (4) refunds abandoned bets once their deadline has passed.
 *
 * Server seeds are drawn from crypto.randomBytes (not from the public rng seed), live only in this
 * process's memory (simulator-random.ts: SeedVault), are deleted as soon as their bet is settled or
 * abandoned, and are never logged, returned or written anywhere.
 *
 * Its parts: the seeds (SeedVault), the bets and counters, one round's phases (StepRun), and the
 * schedule of rounds (step-loop.ts: StepLoop).
 */
import {
  parseEventLogs,
  type Account,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
  toHex,
  zeroHash,
} from "viem";
import { createNonceManager, privateKeyToAccount } from "viem/accounts";
import { jsonRpc } from "viem/nonce";
import type { Logger } from "../core/logger.ts";
import { silentLogger } from "../core/logger.ts";
import { GAME_IDS, SETTLE_GAS, parseSolidityCalldata, type GameId } from "./betvault.ts";
import { fetchChainId, localChain, publicClientFor, walletClientFor } from "./clients.ts";
import { betVaultAbi } from "./generated/artifacts.ts";
import { createRng, SeedVault, type Rng } from "./simulator-random.ts";
import { StepLoop } from "./step-loop.ts";

/** What the simulator needs from zk/groth16.ts. */
export interface BetProver {
  proveBetOutcome(input: { serverSeed: bigint; betId: bigint; clientSeed: string; serverSeedHash?: string }): Promise<{
    outcome: string;
    serverSeedHash: string;
    publicSignals: string[];
    solidityCalldata: string;
  }>;
  serverSeedCommitment(seed: bigint): bigint;
}

export interface SimulatorOptions {
  rpcUrl: string;
  /** Read from the node when omitted. */
  chainId?: number;
  betVault: Address;
  /** The vault's operator: publishes commitments and settles. */
  operator: Hex | Account;
  /** Player private keys (DEV KEYS on anvil). */
  players: readonly Hex[];
  /** Seed of the deterministic rng choosing players, games, stakes, client seeds and which bets expire. */
  seed?: number | string;
  /** Share of bets the operator settles; the rest expire and get refunded. Default 0.8. */
  settleRatio?: number;
  /** Bets placed per step (each by a different player when possible). Default 4. */
  betsPerStep?: number;
  /** Pause between steps in start(). Default 1000 ms. */
  intervalMs?: number;
  /** Commitments published per batch. Default 32. */
  commitmentBatch?: number;
  /** Stake range in wei, inclusive. Default 0.001 .. 0.1 ether. */
  minStake?: bigint;
  maxStake?: bigint;
  games?: readonly GameId[];
  /** Default: zk/groth16.ts (loaded lazily). */
  prover?: BetProver;
  logger?: Logger;
  /** Gas for settleBet (explicit: the verifier returns false when out of gas). Default SETTLE_GAS. */
  settleGas?: bigint;
  /**
   * DEMO ONLY: share of settlements sent with the claimed outcome moved by one and the proof left
   * as is. Only a verifier that accepts anything settles them (`npm start`'s permissive chain), and
   * the service stores them as `verified: false`. Default 0.
   */
  badProofRatio?: number;
  /** Receipt polling interval. Default 50 ms. */
  pollingInterval?: number;
}

export type SimBetState = "PENDING" | "SETTLED" | "REFUNDED";

/** A bet as the simulator knows it (public data only). */
export interface SimBet {
  betId: bigint;
  player: Address;
  game: GameId;
  stake: bigint;
  clientSeed: Hex;
  serverSeedHash: Hex;
  deadline: bigint;
  plan: "settle" | "expire";
  state: SimBetState;
  outcome?: bigint;
  won?: boolean;
  payout?: bigint;
  placedTx: Hash;
  settledTx?: Hash;
  refundedTx?: Hash;
}

export interface StepReport {
  step: number;
  placed: bigint[];
  settled: bigint[];
  refunded: bigint[];
  failed: number;
  commitmentsPublished: number;
  durationMs: number;
}

export interface SimulatorStats {
  steps: number;
  placed: number;
  settled: number;
  refunded: number;
  pending: number;
  failed: number;
  commitmentsPublished: number;
  proofs: number;
  avgProofMs: number;
  elapsedMs: number;
  betsPerSecond: number;
}

export interface Simulator {
  /** One round: commitments, bets, proofs + settlements, refunds. Steps never overlap. */
  step(): Promise<StepReport>;
  /** Run steps every intervalMs until stop(). */
  start(): void;
  /** Finish the current step and stop. Does not release the prover (see releaseProverResources). */
  stop(): Promise<void>;
  stats(): SimulatorStats;
  bets(): ReadonlyMap<bigint, Readonly<SimBet>>;
}

async function loadDefaultProver(): Promise<BetProver> {
  const zk = await import("../zk/groth16.ts");
  return { proveBetOutcome: zk.proveBetOutcome, serverSeedCommitment: zk.serverSeedCommitment };
}

/** The viem clients and the prover a simulator works with, made on its first step. */
interface SimClients {
  publicClient: PublicClient<Transport, Chain>;
  operatorWallet: WalletClient<Transport, Chain, Account>;
  playerWallets: WalletClient<Transport, Chain, Account>[];
  prover: BetProver;
}

/** The options with their defaults applied. */
type Settings = Required<
  Pick<SimulatorOptions, "settleRatio" | "betsPerStep" | "intervalMs" | "commitmentBatch" | "minStake" | "maxStake" | "games" | "settleGas" | "badProofRatio">
> &
  Pick<SimulatorOptions, "betVault">;

type Counters = {
  steps: number;
  placed: number;
  settled: number;
  refunded: number;
  failed: number;
  commitmentsPublished: number;
  proofs: number;
  proofMs: number;
};

/** What one round works with and reports into. */
interface StepRunDeps {
  settings: Settings;
  clients: SimClients;
  seeds: SeedVault;
  bets: Map<bigint, SimBet>;
  rng: Rng;
  counters: Counters;
  log: Logger;
  report: StepReport;
}

/** One round: commitments, bets, proofs + settlements, refunds; each phase reports into `report`. */
class StepRun {
  private readonly vault: { address: Address; abi: typeof betVaultAbi };

  private readonly deps: StepRunDeps;
  constructor(deps: StepRunDeps) {
    this.deps = deps;
    this.vault = { address: deps.settings.betVault, abi: betVaultAbi };
  }

  private fail(): void {
    this.deps.report.failed++;
    this.deps.counters.failed++;
  }

  /** 1. Keep enough commitments published (in an earlier block) for this step's bets. */
  async publishCommitments(): Promise<void> {
    const { publicClient, operatorWallet, prover } = this.deps.clients;
    const { betsPerStep, commitmentBatch } = this.deps.settings;
    const available = await publicClient.readContract({ ...this.vault, functionName: "availableCommitments" });
    if (available >= BigInt(betsPerStep)) return;
    const count = Math.max(commitmentBatch, betsPerStep);
    const hashes = this.deps.seeds.draw(count, prover);
    const hash = await operatorWallet.writeContract({
      ...this.vault,
      functionName: "publishCommitments",
      args: [hashes],
      gas: 60_000n + 75_000n * BigInt(count),
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") {
      this.deps.seeds.forget(hashes);
      throw new Error("publishCommitments reverted");
    }
    this.deps.report.commitmentsPublished = count;
    this.deps.counters.commitmentsPublished += count;
  }

  /** 2. Bets from distinct random players, random game/stake/client seed; returns those planned for settlement. */
  async placeBets(): Promise<SimBet[]> {
    const { publicClient, playerWallets } = this.deps.clients;
    const { betsPerStep, games, minStake, maxStake, settleRatio } = this.deps.settings;
    const rng = this.deps.rng;
    const order = playerWallets.map((w, i) => ({ w, r: rng.next(), i })).sort((x, y) => x.r - y.r);
    const sends: Promise<Hash>[] = [];
    for (let i = 0; i < betsPerStep; i++) {
      const pick = order[i % order.length];
      if (!pick) break;
      const game = games[Math.floor(rng.next() * games.length)] ?? "coinflip";
      const stake = (rng.bigintIn(minStake, maxStake) / 10n ** 9n) * 10n ** 9n || minStake;
      const clientSeed = toHex(rng.bytes(32));
      sends.push(pick.w.writeContract({ ...this.vault, functionName: "placeBet", args: [game, clientSeed, zeroHash], value: stake, gas: 300_000n }));
    }
    const placedHashes = await Promise.allSettled(sends);
    const placedReceipts = await Promise.all(
      placedHashes.map(async (r) => (r.status === "rejected" ? undefined : publicClient.waitForTransactionReceipt({ hash: r.value }))),
    );
    const toSettle: SimBet[] = [];
    for (const receipt of placedReceipts) {
      if (receipt?.status !== "success") {
        this.fail();
        continue;
      }
      for (const ev of parseEventLogs({ abi: betVaultAbi, eventName: "BetPlaced", logs: receipt.logs })) {
        const a = ev.args;
        const commitment = a.serverSeedHash.toLowerCase() as Hex;
        const plan: SimBet["plan"] = this.deps.seeds.has(commitment) && rng.next() < settleRatio ? "settle" : "expire";
        if (plan === "expire") this.deps.seeds.forget([commitment]); // never needed again
        const bet: SimBet = {
          betId: a.betId,
          player: a.player,
          game: a.game as GameId,
          stake: a.stake,
          clientSeed: a.clientSeed,
          serverSeedHash: commitment,
          deadline: BigInt(a.deadline),
          plan,
          state: "PENDING",
          placedTx: receipt.transactionHash,
        };
        this.deps.bets.set(bet.betId, bet);
        this.deps.report.placed.push(bet.betId);
        this.deps.counters.placed++;
        if (plan === "settle") toSettle.push(bet);
      }
    }
    return toSettle;
  }

  /** 3. Prove (sequential: CPU-bound) and send each settlement at once; then wait for receipts. */
  async settle(bets: SimBet[]): Promise<void> {
    const { publicClient, operatorWallet, prover } = this.deps.clients;
    const settling: { bet: SimBet; hash: Promise<Hash> }[] = [];
    for (const bet of bets) {
      const serverSeed = this.deps.seeds.take(bet.serverSeedHash);
      if (serverSeed === undefined) continue;
      const tp = performance.now();
      const proved = await prover.proveBetOutcome({ serverSeed, betId: bet.betId, clientSeed: bet.clientSeed, serverSeedHash: bet.serverSeedHash });
      this.deps.counters.proofs++;
      this.deps.counters.proofMs += performance.now() - tp;
      const { pA, pB, pC } = parseSolidityCalldata(proved.solidityCalldata);
      const { badProofRatio } = this.deps.settings;
      const bad = badProofRatio > 0 && this.deps.rng.next() < badProofRatio; // no draw otherwise: the same bets as before
      if (bad) this.deps.log.info({ event: "bad_proof_sent", betId: bet.betId.toString() });
      const hash = operatorWallet.writeContract({
        ...this.vault,
        functionName: "settleBet",
        args: [bet.betId, BigInt(proved.outcome) + (bad ? 1n : 0n), pA, pB, pC],
        gas: this.deps.settings.settleGas,
      });
      hash.catch(() => undefined);
      settling.push({ bet, hash });
    }
    for (const { bet, hash } of settling) {
      try {
        const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
        const ev = parseEventLogs({ abi: betVaultAbi, eventName: "BetSettled", logs: receipt.logs })[0];
        if (receipt.status !== "success" || !ev) throw new Error("settleBet reverted");
        bet.state = "SETTLED";
        bet.outcome = ev.args.outcome;
        bet.won = ev.args.won;
        bet.payout = ev.args.payout;
        bet.settledTx = receipt.transactionHash;
        this.deps.report.settled.push(bet.betId);
        this.deps.counters.settled++;
      } catch (error) {
        // Stays PENDING on-chain: it will be refunded after its deadline like an abandoned bet.
        bet.plan = "expire";
        this.fail();
        this.deps.log.warn({ event: "settle_failed", betId: bet.betId.toString(), error: String(error).slice(0, 300) });
      }
    }
  }

  /** 4. Refund expired pending bets (sent by their player; anyone could). */
  async refundExpired(): Promise<void> {
    const { publicClient, operatorWallet, playerWallets } = this.deps.clients;
    const head = await publicClient.getBlock({ blockTag: "latest" });
    const now = head.timestamp > BigInt(Math.floor(Date.now() / 1000)) ? head.timestamp : BigInt(Math.floor(Date.now() / 1000));
    const refunds: { bet: SimBet; hash: Promise<Hash> }[] = [];
    for (const bet of this.deps.bets.values()) {
      if (bet.state !== "PENDING" || bet.plan !== "expire" || now <= bet.deadline + 1n) continue;
      const wallet = playerWallets.find((w) => w.account.address.toLowerCase() === bet.player.toLowerCase()) ?? operatorWallet;
      const hash = wallet.writeContract({ ...this.vault, functionName: "refundBet", args: [bet.betId], gas: 150_000n });
      hash.catch(() => undefined);
      refunds.push({ bet, hash });
    }
    for (const { bet, hash } of refunds) {
      try {
        const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
        if (receipt.status !== "success") throw new Error("refundBet reverted");
        bet.state = "REFUNDED";
        bet.refundedTx = receipt.transactionHash;
        this.deps.report.refunded.push(bet.betId);
        this.deps.counters.refunded++;
      } catch (error) {
        this.fail();
        // retried next step unless someone else refunded it
        const onchain = await publicClient.readContract({ ...this.vault, functionName: "getBet", args: [bet.betId] });
        if (onchain.status === 3) bet.state = "REFUNDED";
        this.deps.log.warn({ event: "refund_failed", betId: bet.betId.toString(), error: String(error).slice(0, 300) });
      }
    }
  }
}

export function createSimulator(options: SimulatorOptions): Simulator {
  if (options.players.length === 0) throw new Error("at least one player");
  const settings: Settings = {
    betVault: options.betVault,
    settleRatio: options.settleRatio ?? 0.8,
    betsPerStep: options.betsPerStep ?? 4,
    intervalMs: options.intervalMs ?? 1000,
    commitmentBatch: options.commitmentBatch ?? 32,
    minStake: options.minStake ?? 10n ** 15n,
    maxStake: options.maxStake ?? 10n ** 17n,
    games: options.games ?? GAME_IDS,
    settleGas: options.settleGas ?? SETTLE_GAS,
    badProofRatio: options.badProofRatio ?? 0,
  };
  const log = options.logger ?? silentLogger();
  const rng = createRng(options.seed ?? 1);
  const nonceManager = createNonceManager({ source: jsonRpc() });
  const toAccount = (a: Hex | Account): Account => (typeof a === "string" ? privateKeyToAccount(a, { nonceManager }) : a);
  const operatorAccount = toAccount(options.operator);
  const playerAccounts = options.players.map((k) => privateKeyToAccount(k, { nonceManager }));

  const seeds = new SeedVault();
  const bets = new Map<bigint, SimBet>();
  const counters: Counters = { steps: 0, placed: 0, settled: 0, refunded: 0, failed: 0, commitmentsPublished: 0, proofs: 0, proofMs: 0 };
  let startedAt: number | undefined;

  let setup: Promise<SimClients> | undefined;
  const clients = () => {
    setup ??= (async () => {
      const chainId = options.chainId ?? (await fetchChainId(options.rpcUrl));
      const chain = localChain(chainId, options.rpcUrl);
      const polling = { pollingInterval: options.pollingInterval ?? 50 };
      return {
        publicClient: publicClientFor(chain, options.rpcUrl, polling),
        operatorWallet: walletClientFor(chain, options.rpcUrl, operatorAccount, polling),
        playerWallets: playerAccounts.map((a) => walletClientFor(chain, options.rpcUrl, a, polling)),
        prover: options.prover ?? (await loadDefaultProver()),
      };
    })();
    return setup;
  };

  const runStep = async (): Promise<StepReport> => {
    const t0 = performance.now();
    startedAt ??= Date.now();
    const ready = await clients();
    const report: StepReport = { step: ++counters.steps, placed: [], settled: [], refunded: [], failed: 0, commitmentsPublished: 0, durationMs: 0 };
    const run = new StepRun({ settings, clients: ready, seeds, bets, rng, counters, log, report });
    await run.publishCommitments();
    await run.settle(await run.placeBets());
    await run.refundExpired();
    report.durationMs = Math.round(performance.now() - t0);
    return report;
  };

  const stats = (): SimulatorStats => {
    let pending = 0;
    for (const b of bets.values()) if (b.state === "PENDING") pending++;
    const elapsedMs = startedAt === undefined ? 0 : Date.now() - startedAt;
    return {
      steps: counters.steps,
      placed: counters.placed,
      settled: counters.settled,
      refunded: counters.refunded,
      pending,
      failed: counters.failed,
      commitmentsPublished: counters.commitmentsPublished,
      proofs: counters.proofs,
      avgProofMs: counters.proofs ? counters.proofMs / counters.proofs : 0,
      elapsedMs,
      betsPerSecond: elapsedMs > 0 ? (counters.placed * 1000) / elapsedMs : 0,
    };
  };

  const logStep = (r: StepReport) => {
    const s = stats();
    log.info({
      event: "step",
      step: r.step,
      placed: r.placed.length,
      settled: r.settled.length,
      refunded: r.refunded.length,
      failed: r.failed,
      commitmentsPublished: r.commitmentsPublished,
      durationMs: r.durationMs,
      totals: { placed: s.placed, settled: s.settled, refunded: s.refunded, pending: s.pending, failed: s.failed },
      betsPerSecond: Number(s.betsPerSecond.toFixed(2)),
      avgProofMs: Math.round(s.avgProofMs),
    });
  };
  const steps = new StepLoop<StepReport>(runStep, settings.intervalMs, logStep, log);

  return {
    step: () => steps.step(),
    start: () => steps.start(),
    stop: () => steps.stop(),
    stats,
    bets: () => bets,
  };
}
