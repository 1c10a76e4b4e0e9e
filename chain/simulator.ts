/**
 * The operator simulator: the off-chain resolver of BetVault plus a crowd of simulated players.
 *
 * Each step it (1) keeps a buffer of server-seed commitments published on-chain, (2) has random
 * players place bets with random games, stakes and client seeds, (3) proves and settles most of them
 * (settleRatio) and abandons the rest, (4) refunds abandoned bets once their deadline has passed.
 *
 * Server seeds are drawn from crypto.randomBytes (not from the public rng seed), live only in this
 * process's memory (a Map keyed by commitment), are deleted as soon as their bet is settled or
 * abandoned, and are never logged, returned or written anywhere.
 */
import { createHash, randomBytes } from "node:crypto";
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
import { FIELD_SIZE, GAME_IDS, SETTLE_GAS, fieldToBytes32, parseSolidityCalldata, type GameId } from "./betvault.ts";
import { fetchChainId, localChain, publicClientFor, walletClientFor } from "./clients.ts";
import { betVaultAbi } from "./generated/artifacts.ts";

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

/** sfc32 seeded from sha256(seed): reproducible choices, independent of the server seeds. */
function createRng(seed: number | string): { next(): number; bytes(n: number): Uint8Array; bigintIn(lo: bigint, hi: bigint): bigint } {
  const h = createHash("sha256").update(String(seed)).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const u32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) u32();
  const next = (): number => u32() / 4294967296;
  const bytes = (n: number): Uint8Array => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const v = u32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (v >>> (8 * j)) & 0xff;
    }
    return out;
  };
  const bigintIn = (lo: bigint, hi: bigint): bigint => {
    const span = hi - lo + 1n;
    const r = BigInt(`0x${Buffer.from(bytes(16)).toString("hex")}`);
    return lo + (r % span);
  };
  return { next, bytes, bigintIn };
}

/** A uniformly random field element in [1, p): rejection sampling of 254-bit values. */
function randomServerSeed(): bigint {
  for (;;) {
    const buf = randomBytes(32);
    buf[0] = (buf[0] ?? 0) & 0x3f; // 254 bits
    const v = BigInt(`0x${buf.toString("hex")}`);
    if (v > 0n && v < FIELD_SIZE) return v;
  }
}

async function loadDefaultProver(): Promise<BetProver> {
  const zk = await import("../zk/groth16.ts");
  return { proveBetOutcome: zk.proveBetOutcome, serverSeedCommitment: zk.serverSeedCommitment };
}

export function createSimulator(options: SimulatorOptions): Simulator {
  if (options.players.length === 0) throw new Error("at least one player");
  const settleRatio = options.settleRatio ?? 0.8;
  const betsPerStep = options.betsPerStep ?? 4;
  const intervalMs = options.intervalMs ?? 1000;
  const commitmentBatch = options.commitmentBatch ?? 32;
  const minStake = options.minStake ?? 10n ** 15n;
  const maxStake = options.maxStake ?? 10n ** 17n;
  const games = options.games ?? GAME_IDS;
  const settleGas = options.settleGas ?? SETTLE_GAS;
  const log = options.logger ?? silentLogger();
  const rng = createRng(options.seed ?? 1);
  const nonceManager = createNonceManager({ source: jsonRpc() });
  const toAccount = (a: Hex | Account): Account =>
    typeof a === "string" ? privateKeyToAccount(a, { nonceManager }) : a;
  const operatorAccount = toAccount(options.operator);
  const playerAccounts = options.players.map((k) => privateKeyToAccount(k, { nonceManager }));

  /** commitment (bytes32, lowercase) -> server seed. In memory only; entries removed when used. */
  const serverSeeds = new Map<Hex, bigint>();
  const bets = new Map<bigint, SimBet>();

  let setup:
    | Promise<{
        publicClient: PublicClient<Transport, Chain>;
        operatorWallet: WalletClient<Transport, Chain, Account>;
        playerWallets: WalletClient<Transport, Chain, Account>[];
        prover: BetProver;
      }>
    | undefined;
  const init = () => {
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

  const counters = { steps: 0, placed: 0, settled: 0, refunded: 0, failed: 0, commitmentsPublished: 0, proofs: 0, proofMs: 0 };
  let startedAt: number | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function runStep(): Promise<StepReport> {
    const t0 = performance.now();
    startedAt ??= Date.now();
    const { publicClient, operatorWallet, playerWallets, prover } = await init();
    const report: StepReport = {
      step: ++counters.steps,
      placed: [],
      settled: [],
      refunded: [],
      failed: 0,
      commitmentsPublished: 0,
      durationMs: 0,
    };
    const vault = { address: options.betVault, abi: betVaultAbi } as const;

    // 1. Commitments: keep enough published (in an earlier block) for this step's bets.
    const available = await publicClient.readContract({ ...vault, functionName: "availableCommitments" });
    if (available < BigInt(betsPerStep)) {
      const count = Math.max(commitmentBatch, betsPerStep);
      const hashes: Hex[] = [];
      for (let i = 0; i < count; i++) {
        const seed = randomServerSeed();
        const commitment = fieldToBytes32(prover.serverSeedCommitment(seed));
        serverSeeds.set(commitment, seed);
        hashes.push(commitment);
      }
      const hash = await operatorWallet.writeContract({
        ...vault,
        functionName: "publishCommitments",
        args: [hashes],
        gas: 60_000n + 75_000n * BigInt(count),
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") {
        for (const h of hashes) serverSeeds.delete(h);
        throw new Error("publishCommitments reverted");
      }
      report.commitmentsPublished = count;
      counters.commitmentsPublished += count;
    }

    // 2. Bets: distinct random players, random game/stake/client seed.
    const order = playerWallets.map((w, i) => ({ w, r: rng.next(), i })).sort((x, y) => x.r - y.r);
    const sends: Promise<Hash>[] = [];
    for (let i = 0; i < betsPerStep; i++) {
      const pick = order[i % order.length];
      if (!pick) break;
      const game = games[Math.floor(rng.next() * games.length)] ?? "coinflip";
      const stake = (rng.bigintIn(minStake, maxStake) / 10n ** 9n) * 10n ** 9n || minStake;
      const clientSeed = toHex(rng.bytes(32));
      sends.push(
        pick.w.writeContract({ ...vault, functionName: "placeBet", args: [game, clientSeed, zeroHash], value: stake, gas: 300_000n }),
      );
    }
    const placedHashes = await Promise.allSettled(sends);
    const placedReceipts = await Promise.all(
      placedHashes.map(async (r) => {
        if (r.status === "rejected") return undefined;
        return publicClient.waitForTransactionReceipt({ hash: r.value });
      }),
    );
    const toSettle: SimBet[] = [];
    for (const receipt of placedReceipts) {
      if (!receipt || receipt.status !== "success") {
        report.failed++;
        counters.failed++;
        continue;
      }
      for (const ev of parseEventLogs({ abi: betVaultAbi, eventName: "BetPlaced", logs: receipt.logs })) {
        const a = ev.args;
        const commitment = a.serverSeedHash.toLowerCase() as Hex;
        const ours = serverSeeds.has(commitment);
        const plan: SimBet["plan"] = ours && rng.next() < settleRatio ? "settle" : "expire";
        if (plan === "expire") serverSeeds.delete(commitment); // never needed again
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
        bets.set(bet.betId, bet);
        report.placed.push(bet.betId);
        counters.placed++;
        if (plan === "settle") toSettle.push(bet);
      }
    }

    // 3. Prove (sequential: CPU-bound) and send each settlement at once; then wait for receipts.
    const settling: { bet: SimBet; hash: Promise<Hash> }[] = [];
    for (const bet of toSettle) {
      const serverSeed = serverSeeds.get(bet.serverSeedHash);
      serverSeeds.delete(bet.serverSeedHash);
      if (serverSeed === undefined) continue;
      const tp = performance.now();
      const proved = await prover.proveBetOutcome({
        serverSeed,
        betId: bet.betId,
        clientSeed: bet.clientSeed,
        serverSeedHash: bet.serverSeedHash,
      });
      counters.proofs++;
      counters.proofMs += performance.now() - tp;
      const { pA, pB, pC } = parseSolidityCalldata(proved.solidityCalldata);
      const hash = operatorWallet.writeContract({
        ...vault,
        functionName: "settleBet",
        args: [bet.betId, BigInt(proved.outcome), pA, pB, pC],
        gas: settleGas,
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
        report.settled.push(bet.betId);
        counters.settled++;
      } catch (error) {
        // Stays PENDING on-chain: it will be refunded after its deadline like an abandoned bet.
        bet.plan = "expire";
        report.failed++;
        counters.failed++;
        log.warn({ event: "settle_failed", betId: bet.betId.toString(), error: String(error).slice(0, 300) });
      }
    }

    // 4. Refund expired pending bets (sent by their player; anyone could).
    const head = await publicClient.getBlock({ blockTag: "latest" });
    const now = head.timestamp > BigInt(Math.floor(Date.now() / 1000)) ? head.timestamp : BigInt(Math.floor(Date.now() / 1000));
    const refunds: { bet: SimBet; hash: Promise<Hash> }[] = [];
    for (const bet of bets.values()) {
      if (bet.state !== "PENDING" || bet.plan !== "expire" || now <= bet.deadline + 1n) continue;
      const wallet = playerWallets.find((w) => w.account.address.toLowerCase() === bet.player.toLowerCase()) ?? operatorWallet;
      const hash = wallet.writeContract({ ...vault, functionName: "refundBet", args: [bet.betId], gas: 150_000n });
      hash.catch(() => undefined);
      refunds.push({ bet, hash });
    }
    for (const { bet, hash } of refunds) {
      try {
        const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
        if (receipt.status !== "success") throw new Error("refundBet reverted");
        bet.state = "REFUNDED";
        bet.refundedTx = receipt.transactionHash;
        report.refunded.push(bet.betId);
        counters.refunded++;
      } catch (error) {
        report.failed++;
        counters.failed++;
        // retried next step unless someone else refunded it
        const onchain = await publicClient.readContract({ ...vault, functionName: "getBet", args: [bet.betId] });
        if (onchain.status === 3) bet.state = "REFUNDED";
        log.warn({ event: "refund_failed", betId: bet.betId.toString(), error: String(error).slice(0, 300) });
      }
    }

    report.durationMs = Math.round(performance.now() - t0);
    return report;
  }

  const simulator: Simulator = {
    step() {
      const next = queue.then(runStep, runStep);
      queue = next.catch(() => undefined);
      return next;
    },
    start() {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          try {
            const r = await simulator.step();
            const s = simulator.stats();
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
          } catch (error) {
            log.error({ event: "step_failed", error: String(error).slice(0, 500) });
          }
          if (running) {
            await new Promise<void>((r) => {
              const timer = setTimeout(r, intervalMs);
              wake = () => {
                clearTimeout(timer);
                r();
              };
            });
            wake = undefined;
          }
        }
      })();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      await queue;
    },
    stats() {
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
    },
    bets() {
      return bets;
    },
  };
  return simulator;
}
