/**
 * createIndexer({ db, logger, networks }): builds the indexer without starting anything (build
 * apart from listen). start() checks every network's verification key against its deployed verifier
 * (indexer/verifier-key.ts) before it writes anything, then registers every network (Network/Contract rows with the
 * verification key, the IndexingCursor) and starts one sync loop per network; stop() ends the
 * loops after their current step (a transaction in flight commits or rolls back whole).
 */
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkConfig } from "./config.ts";
import { IndexerConfigError, type IndexerError } from "./errors.ts";
import { createProofVerifier, loadVerificationKey, skippedProofVerifier, type ProofVerifier, type VerificationKeyFile } from "./proofs.ts";
import { createChainRpc, type ChainRpc } from "./rpc.ts";
import { IndexerStore, type StoreHooks } from "./store.ts";
import { checkVerifierKey } from "./verifier-key.ts";
import { NetworkSync, type IndexerEvent, type NetworkStatus } from "./sync.ts";

export type { IndexerEvent, NetworkStatus };

export interface IndexerDeps {
  db: Database;
  logger: Logger;
  networks: readonly NetworkConfig[];
  /** Every block / reorg / finalize / ready / reset / error / fatal event of every network. */
  onEvent?: (event: IndexerEvent) => void;
  /** Test and observability hooks inside the write transactions. */
  hooks?: StoreHooks;
  /**
   * Largest number of events one backfill commit carries (whole blocks only). Default 20 000: a bet placed
   * and settled or refunded within one commit is written once, in its final state, instead of inserted
   * and then updated (every index of "Bet" and its triggers twice).
   */
  maxEventsPerCommit?: number;
  /** Largest number of settlements one backfill commit carries (proofs pipelined per commit). Default 500. */
  maxSettlementsPerCommit?: number;
  /** How often an idle indexer refreshes its cursor's head and updatedAt. Default 15 s. */
  heartbeatMs?: number;
  /** While a network backfills, how often its progress is logged and emitted. Default 10 s. */
  progressIntervalMs?: number;
  /** Worker threads verifying each network's proofs in batches (0: on this thread). Default: one per core. */
  proofWorkers?: number;
  /** Benchmarks only: another verifier per network (e.g. snarkjs one by one, to compare). */
  createVerifier?: (vk: VerificationKeyFile) => ProofVerifier;
  /** Benchmarks only (INDEXER_BENCH_SKIP_PROOF_VERIFICATION, refused in production): store every settlement unverified, checking no proof. */
  skipProofVerification?: boolean;
}

export interface Indexer {
  /** Registers the networks and starts following them; resolves once registered (not when caught up). */
  start(): Promise<void>;
  /** Stops every loop after its current step and closes RPC connections. Idempotent. */
  stop(): Promise<void>;
  status(): NetworkStatus[];
  /**
   * Resolves once every network (or `chainId`) has indexed the chain's current head, as read from
   * its RPC node when called; rejects on a fatal network error or after `timeoutMs` (default 60 s).
   */
  synced(options?: { chainId?: number; timeoutMs?: number }): Promise<void>;
}

interface Running {
  network: NetworkConfig;
  sync: NetworkSync;
  rpc: ChainRpc;
  verifier: ProofVerifier;
  done: Promise<void>;
}

export function createIndexer(deps: IndexerDeps): Indexer {
  const { db, logger } = deps;
  const store = new IndexerStore(db, deps.hooks);
  const controller = new AbortController();
  let running: Running[] = [];
  let state: "new" | "starting" | "running" | "stopped" = "new";
  const emit = (event: IndexerEvent) => {
    if (event.type === "rejected-proofs") {
      // BetVault settles only what its verifier accepts: the served key and that verifier disagree.
      logger.error(
        { chainId: event.chainId, betIds: event.betIds.slice(0, 20), count: event.betIds.length },
        "settled proofs fail under the served verification key: the chain's verifier accepted them, so the key or the verifier is wrong",
      );
    }
    deps.onEvent?.(event);
  };

  return {
    async start() {
      if (state !== "new") throw new IndexerConfigError(`the indexer cannot start: it is ${state}`);
      state = "starting";
      const chainIds = new Set(deps.networks.map((n) => n.chainId));
      if (chainIds.size !== deps.networks.length) throw new IndexerConfigError("two networks share a chainId");
      // Every network's key is checked before any is registered: a refused key leaves the
      // database untouched, even when a network listed before it would have passed.
      const checked: { network: NetworkConfig; vk: VerificationKeyFile; rpc: ChainRpc; verifier: ProofVerifier }[] = [];
      try {
        for (const network of deps.networks) {
          const vk = loadVerificationKey(network.verificationKeyPath);
          const rpc = createChainRpc({
            http: network.rpc.http,
            ws: network.rpc.ws,
            fallback: network.rpc.fallback,
            address: network.contracts.BetVault.address,
            chainId: network.chainId,
            logger,
            signal: controller.signal,
          });
          if (deps.skipProofVerification)
            logger.warn({ chainId: network.chainId }, "benchmark setting: no proof is checked, every settlement is stored unverified");
          // Built first: its workers boot while the key is checked, the network registered and the first logs read.
          const verifier = deps.skipProofVerification
            ? skippedProofVerifier()
            : (deps.createVerifier?.(vk) ?? createProofVerifier(vk, { workers: deps.proofWorkers }));
          verifier.warm?.().catch(() => undefined); // a worker that fails to start is replaced on the first verify
          checked.push({ network, vk, rpc, verifier });
          // The key is served to clients and judges every proof: it must be the deployed verifier's.
          await checkVerifierKey({ network, rpc, key: vk, logger });
        }
        for (const { network, vk } of checked) {
          const { keyChanged } = await store.register(network, vk);
          if (!keyChanged) continue;
          // The reset re-indexes from the deploy block: a resumable backfill, as /health shows.
          logger.warn(
            { chainId: network.chainId, name: network.name, previousKeySha256: keyChanged.from, keySha256: vk.sha256, removed: keyChanged.removed },
            "verification key changed: the network's results are re-indexed and re-verified under the new key",
          );
          emit({ type: "reset", chainId: network.chainId, removed: keyChanged.removed, reason: "verification key changed" });
        }
      } catch (error) {
        await Promise.all(checked.map((c) => c.verifier.close()));
        await Promise.all(checked.map((c) => c.rpc.close().catch(() => undefined)));
        throw error;
      }
      for (const { network, rpc, verifier } of checked) {
        const sync = new NetworkSync({
          network,
          store,
          rpc,
          verifier,
          logger,
          emit,
          maxEventsPerCommit: deps.maxEventsPerCommit ?? 20_000,
          maxSettlementsPerCommit: deps.maxSettlementsPerCommit ?? 500,
          heartbeatMs: deps.heartbeatMs ?? 15_000,
          progressIntervalMs: deps.progressIntervalMs ?? 10_000,
          signal: controller.signal,
        });
        running.push({ network, sync, rpc, verifier, done: Promise.resolve() });
        logger.info(
          {
            chainId: network.chainId,
            name: network.name,
            betVault: network.contracts.BetVault.address,
            deployBlock: network.contracts.BetVault.deployBlock,
            ws: Boolean(network.rpc.ws),
          },
          "network registered",
        );
      }
      if (controller.signal.aborted) return;
      running = running.map((r) => ({ ...r, done: r.sync.run() }));
      state = "running";
    },

    async stop() {
      if (state === "stopped") return;
      state = "stopped";
      controller.abort();
      await Promise.all(running.map((r) => r.done));
      await Promise.all(running.map((r) => r.rpc.close().catch(() => undefined)));
      await Promise.all(running.map((r) => r.verifier.close()));
    },

    status() {
      return running.map((r) => r.sync.status());
    },

    async synced(options = {}) {
      const targets = running.filter((r) => options.chainId === undefined || r.network.chainId === options.chainId);
      if (targets.length === 0) throw new IndexerConfigError(`no running network ${options.chainId ?? ""}`);
      const deadline = Date.now() + (options.timeoutMs ?? 60_000);
      for (const target of targets) {
        const head = await target.rpc.latestBlock();
        for (;;) {
          const s = target.sync.status();
          if (s.failed) throw s.failed satisfies IndexerError;
          const there = s.indexedBlock !== null && (s.indexedBlock > head.number || (s.indexedBlock === head.number && s.indexedBlockHash === head.hash));
          if (there && s.isReady) break;
          if (state === "stopped") throw new IndexerConfigError("the indexer stopped");
          if (Date.now() > deadline)
            throw new IndexerConfigError(`chain ${target.network.chainId} not synced to ${head.number} in time (at ${s.indexedBlock})`);
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    },
  };
}
