/**
 * One network's sync loop, Ponder-style: a single stream of `block`, `reorg` and `finalize`.
 *
 * - Backfill: while the cursor is below the finalized block (core/finality.ts), BetVault logs
 *   are read with eth_getLogs in ranges of `batchSize` blocks and committed in groups of whole
 *   blocks (≤ maxEventsPerCommit events, ≤ maxSettlementsPerCommit settlements), each group with
 *   the cursor in one transaction; their proofs are verified ahead (indexer/backfill-pipeline.ts).
 * - Follow: above that, block by block: the header's parent hash must be the stored hash of the
 *   cursor block, the logs are read by block hash, and block, events and cursor commit together.
 * - Reorg: a parent-hash mismatch (or a head at or below the cursor with another hash than ours
 *   at its height; a node merely behind the cursor is waited for, never rolled back to) walks back
 *   over the stored recent block hashes to the common ancestor, rolls everything above it back in
 *   one transaction, and the loop re-indexes from there. An ancestor below the finalized block is
 *   ReorgTooDeepError (or, with resetOnChainMismatch, a full re-index).
 * - Failures: retryable errors back off (jittered, capped) and the cursor is reloaded; anything
 *   else stops this network and is reported as `fatal`.
 * - Progress: while backfilling, one `progress` event and info line per `progressIntervalMs`.
 */
import type { Hex } from "viem";
import { backfillStartBlock } from "../core/backfill.ts";
import { finalizedBlockAt } from "../core/finality.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { rootTraced } from "../core/tracing.ts";
import type { Bet } from "../prisma/generated/client.ts";
import { applyEvents, betIdKey, betsToLoad, settlementInputs, settlementKey } from "./apply.ts";
import type { NetworkConfig } from "./config.ts";
import { backoffDelay, ChainIdMismatchError, ChainInconsistentError, ReorgTooDeepError, sleep, toIndexerError, type IndexerError } from "./errors.ts";
import { decodeBetLogs, type BetEvent } from "./events.ts";
import { blockTimestamps } from "./timestamps.ts";
import { BackfillProgressTracker, progressFields, progressMessage } from "./progress.ts";
import { commitGroups, proofsByKey, verifyGroupsAhead } from "./backfill-pipeline.ts";
import type { ProofVerifier, SettlementProof } from "./proofs.ts";
import type { BlockHeader, ChainRpc } from "./rpc.ts";
import type { BlockRef, CursorState, IndexerStore } from "./store.ts";
import { TokenMetadata } from "./tokens.ts";
import type { IndexerEvent } from "./indexer-events.ts";

export type { IndexerEvent };

export interface NetworkSyncDeps {
  network: NetworkConfig;
  store: IndexerStore;
  rpc: ChainRpc;
  verifier: ProofVerifier;
  logger: Logger;
  emit: (event: IndexerEvent) => void;
  /** Largest number of events one commit carries during backfill (whole blocks only). */
  maxEventsPerCommit: number;
  /** Largest number of settlements one backfill commit carries (whole blocks only; pipelined proofs). */
  maxSettlementsPerCommit: number;
  /** How often an idle, caught-up indexer refreshes the cursor's head and updatedAt. */
  heartbeatMs: number;
  /** While backfilling, how often progress is logged and emitted. */
  progressIntervalMs: number;
  signal: AbortSignal;
}

export interface NetworkStatus {
  chainId: number;
  name: string;
  indexedBlock: bigint | null;
  indexedBlockHash: Hex | null;
  headBlock: bigint | null;
  isReady: boolean;
  failed: IndexerError | null;
}

const PENDING_CACHE_SIZE = 50_000;
const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

export class NetworkSync {
  private readonly chainId: number;
  private cursor: BlockRef | undefined;
  private head = 0n;
  /** The finalized block as last published: the deepest block a reorg may roll back to. */
  private finalized = 0n;
  private ready = false;
  private failed: IndexerError | null = null;
  private lastWrite = 0;
  private wake: (() => void) | undefined;
  /** A new head was announced while the loop was busy: do not sleep on the next idle. */
  private headAnnounced = false;
  private subscribed = false;
  /** The RPC node was last seen behind the cursor (logged once per spell). */
  private lagging = false;
  /**
   * PENDING bets as this loop last committed them, by id (insertion order, bounded): settlements
   * and refunds in later batches then need no database read. Only this loop writes its network's
   * bets (the cursor check enforces it); cleared on every rollback, reset and failure.
   */
  private readonly pendingBets = new Map<string, Bet>();
  private readonly progress: BackfillProgressTracker;
  /** Which tokens have a row; reads the new ones from the chain (indexer/tokens.ts). */
  private readonly tokens: TokenMetadata;

  private readonly deps: NetworkSyncDeps;
  constructor(deps: NetworkSyncDeps) {
    this.deps = deps;
    this.chainId = deps.network.chainId;
    this.tokens = new TokenMetadata({ chainId: this.chainId, rpc: deps.rpc, store: deps.store });
    this.progress = new BackfillProgressTracker({ intervalMs: deps.progressIntervalMs, windowMs: Math.max(60_000, 6 * deps.progressIntervalMs) });
  }

  status(): NetworkStatus {
    const { cursor } = this;
    const at = { indexedBlock: cursor?.number ?? null, indexedBlockHash: cursor?.hash ?? null, headBlock: cursor ? this.head : null };
    return { chainId: this.chainId, name: this.deps.network.name, ...at, isReady: this.ready, failed: this.failed };
  }

  /** Runs until the signal aborts or a non-retryable failure. Never rejects. */
  async run(): Promise<void> {
    const { logger, signal } = this.deps;
    // While the WebSocket delivers heads, polling is only a slow safety net; after a subscription
    // error it is the main path again until the next head arrives over the socket.
    this.subscribed = this.deps.rpc.watchHeads(
      () => {
        this.subscribed = true;
        this.headAnnounced = true;
        this.wake?.();
      },
      () => {
        this.subscribed = false;
      },
    );
    let failures = 0;
    // A steady pace even when one getLogs range takes longer than the interval.
    const progressTimer = setInterval(() => this.reportProgress(), this.deps.progressIntervalMs).unref();
    signal.addEventListener("abort", () => clearInterval(progressTimer), { once: true });
    while (!signal.aborted) {
      try {
        if (!this.cursor) await this.init();
        const progressed = await this.step();
        failures = 0;
        if (!progressed) await this.idle();
      } catch (raw) {
        if (signal.aborted) break;
        const error = toIndexerError(raw, this.chainId);
        if (!error.retryable) {
          this.failed = error;
          logger.error({ chainId: this.chainId, code: error.code, err: error }, "indexer stopped on a non-retryable error");
          this.deps.emit({ type: "fatal", chainId: this.chainId, error });
          clearInterval(progressTimer);
          return;
        }
        failures++;
        const delayMs = backoffDelay(failures, { baseDelayMs: 500, maxDelayMs: 30_000 });
        logger.warn(
          { chainId: this.chainId, code: error.code, err: error.details ?? error.shortMessage, attempt: failures, delayMs },
          "indexer step failed, retrying",
        );
        this.deps.emit({ type: "error", chainId: this.chainId, error, attempt: failures, delayMs });
        this.cursor = undefined; // reload from the database: it is the truth
        this.pendingBets.clear();
        this.progress.reset();
        await sleep(delayMs, signal);
      }
    }
  }

  private async init(): Promise<void> {
    const { rpc, store, network } = this.deps;
    const chainId = await rpc.chainId();
    if (chainId !== network.chainId) {
      throw new ChainIdMismatchError(`the RPC endpoint of ${network.name} serves chain ${chainId}, not ${network.chainId}`, { chainId: network.chainId });
    }
    let cursor = await store.cursor(this.chainId);
    if (cursor.hash === "") {
      const block = await rpc.block(cursor.number);
      if (!block)
        throw new ChainInconsistentError(`block ${cursor.number} (before the BetVault deployment) is not on the chain yet`, { chainId: this.chainId });
      await store.anchorCursor(this.chainId, { number: block.number, hash: block.hash });
      cursor = { ...cursor, hash: block.hash };
    }
    this.cursor = { number: cursor.number, hash: cursor.hash as Hex };
    this.head = cursor.headBlock;
    this.finalized = cursor.finalizedBlock;
  }

  /** One unit of work; false when there was nothing to do. */
  private async step(): Promise<boolean> {
    const { rpc, network } = this.deps;
    const cursor = this.requireCursor();
    const latest = await rpc.latestBlock();

    if (latest.number <= cursor.number) {
      // Nothing new, unless the chain under our cursor changed (same height, other hash). A head
      // below the cursor is a node that lags (or another node of a fallback list): only a hash
      // that differs at a block the node has is a reorg.
      const ours = latest.number === cursor.number ? latest : await rpc.block(cursor.number);
      if (ours && ours.hash === cursor.hash) {
        this.head = max(this.head, latest.number);
        this.lagging = false;
        await this.markCaughtUp();
        return false;
      }
      if (!ours && (await this.nodeIsBehind(latest))) {
        await this.markCaughtUp();
        return false;
      }
      this.head = latest.number;
      return this.reorg(min(latest.number, cursor.number), latest);
    }
    this.head = latest.number;
    this.lagging = false;

    const finalizedTarget = finalizedBlockAt(latest.number, network.confirmations);
    if (cursor.number < finalizedTarget) {
      await this.backfill(cursor.number + 1n, min(cursor.number + BigInt(network.batchSize), finalizedTarget));
      return true;
    }

    const next = cursor.number + 1n;
    const header = next === latest.number ? latest : await rpc.block(next);
    if (!header) return false;
    if (header.parentHash !== cursor.hash) return this.reorg(cursor.number, latest);
    const logs = await rpc.logsOfBlock(header.hash);
    const events = decodeBetLogs(logs);
    await this.commitEvents(events, { number: header.number, hash: header.hash }, new Map([[header.number, header.timestamp]]), "follow");
    return true;
  }

  /** Indexes [from, to] (final blocks) with one getLogs and as few commits as the event cap allows. */
  private async backfill(from: bigint, to: bigint): Promise<void> {
    const { rpc } = this.deps;
    const cursor = this.requireCursor();
    const started = performance.now();
    const [logs, first, last] = await Promise.all([rpc.logs(from, to), rpc.block(from), rpc.block(to)]);
    this.deps.logger.debug({ chainId: this.chainId, from, to, logs: logs.length, ms: Math.round(performance.now() - started) }, "getLogs");
    if (!first || !last) throw new ChainInconsistentError(`blocks ${from}..${to} are not all on the chain`, { chainId: this.chainId });
    if (first.parentHash !== cursor.hash) {
      await this.reorg(cursor.number, last);
      return;
    }
    const events = decodeBetLogs(logs);
    const timestamps = await blockTimestamps(this.deps.rpc, this.chainId, logs, [first, last]);

    // The settlement cap exists only to overlap verification with writing: without checks, nothing to overlap.
    const maxSettlements = this.deps.verifier.checksNothing ? Number.POSITIVE_INFINITY : this.deps.maxSettlementsPerCommit;
    const groups = commitGroups(events, { maxEvents: this.deps.maxEventsPerCommit, maxSettlements });
    const ahead = await this.verifyAhead(groups.map(([a, b]) => events.slice(a, b)));
    for (const [i, [a, b]] of groups.entries()) {
      const group = events.slice(a, b);
      const tail = group[group.length - 1];
      const isLast = b >= events.length;
      const target = isLast || !tail ? { number: last.number, hash: last.hash } : { number: tail.blockNumber, hash: tail.blockHash };
      await this.commitEvents(group, target, timestamps, "backfill", ahead[i]);
    }
    if (events.length === 0) await this.commitEvents([], { number: last.number, hash: last.hash }, timestamps, "backfill");
  }

  private cursorState(toBlock: bigint): CursorState {
    const finalizedBlock = finalizedBlockAt(this.head, this.deps.network.confirmations);
    return { headBlock: max(this.head, toBlock), finalizedBlock, isReady: this.ready || toBlock >= this.head };
  }

  private entry(state: CursorState): NetworkEntry {
    const { chainId, name, confirmations } = this.deps.network;
    return { chainId, name, confirmations, headBlock: state.headBlock, finalizedBlock: state.finalizedBlock };
  }

  /** Starts verifying every group's settlements (indexer/backfill-pipeline.ts), bets not placed in the range loaded once. */
  private async verifyAhead(groups: readonly (readonly BetEvent[])[]): Promise<Promise<Map<string, SettlementProof>>[]> {
    const known = await this.existingBets(groups.flat());
    return verifyGroupsAhead(groups, known, (inputs) => proofsByKey(inputs, this.deps.verifier));
  }

  private async commitEvents(
    events: readonly BetEvent[],
    to: BlockRef,
    timestamps: ReadonlyMap<bigint, bigint>,
    mode: "backfill" | "follow",
    verifying?: Promise<Map<string, SettlementProof>>,
  ): Promise<void> {
    const { store } = this.deps;
    const from = this.requireCursor();
    const started = performance.now();
    const existing = await this.existingBets(events);
    const loaded = performance.now();
    const inputs = settlementInputs(events, existing);
    const ahead = verifying ? await verifying : undefined;
    // The verdicts verified ahead are for exactly these settlements (same proof, same bet signals);
    // anything else (none expected) is verified now.
    const proofs = ahead && inputs.every(({ event }) => ahead.has(settlementKey(event))) ? ahead : await proofsByKey(inputs, this.deps.verifier);
    const proved = performance.now();
    const state = this.cursorState(to.number);
    const network = this.entry(state);
    const applied = applyEvents({ chainId: BigInt(this.chainId), events, existing, timestamps, proofs, network });
    const tokens = await this.tokens.newTokens(applied.bets.map((b) => b.token));
    const prepared = performance.now();
    const input = { chainId: this.chainId, from, to, blocks: [to], tokens, bets: applied.bets, results: applied.results, updates: applied.updates, state };
    const pruneBelow = min(state.finalizedBlock, to.number);
    // The commit's trace (when this process traces), stored with its outbox rows for the publisher (core/outbox.ts).
    const traced = { "chain.id": this.chainId, "block.first": String(from.number + 1n), "block.last": String(to.number), events: events.length, mode };
    const finalized = await rootTraced("indexer commit", traced, () => store.commit({ ...input, network, pruneBelow, events: events.length }));
    if (events.length > 0) {
      const ms = (a: number, b: number) => Math.round(b - a);
      this.deps.logger.debug(
        {
          chainId: this.chainId,
          mode,
          from: from.number + 1n,
          to: to.number,
          events: events.length,
          loadMs: ms(started, loaded),
          proofMs: ms(loaded, proved),
          applyMs: ms(proved, prepared),
          commitMs: ms(prepared, performance.now()),
        },
        "committed",
      );
    }
    this.cursor = to;
    this.lastWrite = Date.now();
    this.tokens.committed(tokens);
    for (const bet of applied.bets) {
      const key = betIdKey(bet.betId);
      this.pendingBets.delete(key);
      if (bet.status === "PENDING") this.pendingBets.set(key, bet);
    }
    for (const key of this.pendingBets.keys()) {
      if (this.pendingBets.size <= PENDING_CACHE_SIZE) break;
      this.pendingBets.delete(key);
    }
    const rejected = applied.results.filter((r) => !r.verified).map((r) => betIdKey(r.betId));
    if (rejected.length > 0) this.deps.emit({ type: "rejected-proofs", chainId: this.chainId, betIds: rejected });
    const block = { chainId: this.chainId, mode, fromBlock: from.number + 1n, toBlock: to.number, events: events.length, headBlock: state.headBlock };
    this.deps.emit({ type: "block", ...block, finalized });
    if (mode === "backfill" && !this.ready) {
      const start = this.deps.network.contracts.BetVault.deployBlock;
      const at = performance.now();
      this.progress.record({ at, startBlock: backfillStartBlock(start), block: to.number, targetBlock: state.finalizedBlock, events: events.length });
      this.reportProgress();
    }
    this.published(state, to.number);
  }

  /** Logs and emits the backfill's progress when a report is due (at most once per interval). */
  private reportProgress(): void {
    const progress = this.ready ? undefined : this.progress.due(performance.now());
    if (!progress) return;
    this.deps.logger.info({ chainId: this.chainId, ...progressFields(progress) }, progressMessage(progress));
    this.deps.emit({ type: "progress", chainId: this.chainId, progress });
  }

  /** The stored bets a batch settles or refunds: from the cache of pending bets, else from the database. */
  private async existingBets(events: readonly BetEvent[]): Promise<Map<string, Bet>> {
    const found = new Map<string, Bet>();
    const missing: bigint[] = [];
    for (const betId of betsToLoad(events)) {
      const cached = this.pendingBets.get(betIdKey(betId));
      if (cached) found.set(betIdKey(betId), cached);
      else missing.push(betId);
    }
    if (missing.length > 0) for (const [key, bet] of await this.deps.store.bets(this.chainId, missing)) found.set(key, bet);
    return found;
  }

  private published(state: CursorState, block: bigint): void {
    if (state.finalizedBlock > this.finalized) {
      this.finalized = state.finalizedBlock;
      this.deps.emit({ type: "finalize", chainId: this.chainId, finalizedBlock: state.finalizedBlock });
    }
    if (state.isReady && !this.ready) {
      this.ready = true;
      this.progress.reset();
      this.deps.logger.info({ chainId: this.chainId, block }, "backfill done, following the head");
      this.deps.emit({ type: "ready", chainId: this.chainId, block });
    }
  }

  /** Caught up: publish readiness and refresh head/updatedAt (at most every heartbeatMs when nothing changes). */
  private async markCaughtUp(): Promise<void> {
    const cursor = this.requireCursor();
    const state = this.cursorState(cursor.number);
    const stale = Date.now() - this.lastWrite >= this.deps.heartbeatMs;
    if (!this.ready || state.finalizedBlock > this.finalized || stale) {
      const traced = { "chain.id": this.chainId, "block.finalized": String(state.finalizedBlock) };
      const touch = () => this.deps.store.touchCursor(this.chainId, { ...state, isReady: true }, this.entry(state));
      const updates = await rootTraced("indexer finalize", traced, touch);
      this.lastWrite = Date.now();
      if (updates > 0) this.deps.emit({ type: "finalized", chainId: this.chainId, updates });
      this.published({ ...state, isReady: true }, cursor.number);
    }
  }

  /**
   * The node's head is below the cursor and it does not have the cursor block: true when that is
   * a node behind (its head block is the one we indexed at that height, or we keep no hash there
   * and the network is not a throwaway dev chain), false when its head block differs from ours —
   * a reorg to a shorter chain. Logged once per lagging spell.
   */
  private async nodeIsBehind(latest: BlockHeader): Promise<boolean> {
    const stored = await this.deps.store.blockHash(this.chainId, latest.number);
    if (stored !== undefined ? stored !== latest.hash : this.deps.network.resetOnChainMismatch) return false;
    if (!this.lagging) {
      this.lagging = true;
      const cursor = this.requireCursor();
      this.deps.logger.warn(
        { chainId: this.chainId, nodeHead: latest.number, indexedBlock: cursor.number },
        "the RPC node is behind the indexed block: waiting for it (nothing is rolled back)",
      );
    }
    return true;
  }

  /**
   * Walks back from `fromNumber` to the highest block whose stored hash the chain still has, and
   * rolls everything above it back. Below the finalized block that is a ReorgTooDeepError. A block
   * the node does not have (a lagging node) is no evidence: the walk stops without a rollback and
   * false is returned (the loop then waits); true after a rollback or reset.
   */
  private async reorg(fromNumber: bigint, latest: BlockHeader): Promise<boolean> {
    const { store, rpc, network, logger } = this.deps;
    const cursor = this.requireCursor();
    let ancestor: BlockRef | undefined;
    for (let k = min(fromNumber, cursor.number); k >= this.finalized && k >= 0n; k--) {
      const stored = k === cursor.number ? cursor.hash : await store.blockHash(this.chainId, k);
      if (!stored) break;
      const onChain = await rpc.block(k);
      if (!onChain) {
        logger.warn({ chainId: this.chainId, block: k }, "reorg check: the RPC node does not have the block (lagging): waiting");
        return false;
      }
      if (onChain.hash === stored) {
        ancestor = { number: k, hash: stored };
        break;
      }
    }
    if (!ancestor) {
      const details = `cursor ${cursor.number} ${cursor.hash}, finalized ${this.finalized}, chain head ${latest.number} ${latest.hash}`;
      if (network.resetOnChainMismatch) {
        const start = network.contracts.BetVault.deployBlock > 0n ? network.contracts.BetVault.deployBlock - 1n : 0n;
        const removed = await store.reset(this.chainId, start, this.entry(this.cursorState(start)));
        logger.warn({ chainId: this.chainId, removed, details }, "the chain no longer holds the indexed history: re-indexing from the deploy block");
        this.deps.emit({ type: "reset", chainId: this.chainId, removed, reason: details });
        this.cursor = undefined;
        this.pendingBets.clear();
        this.tokens.forget();
        this.progress.reset();
        this.ready = false;
        this.finalized = 0n;
        return true;
      }
      throw new ReorgTooDeepError(`reorg on ${network.name} deeper than finality (${network.confirmations} confirmations)`, { chainId: this.chainId, details });
    }
    this.head = latest.number;
    // The published finality never moves backwards (the ancestor is at or above it).
    const state: CursorState = { ...this.cursorState(ancestor.number), finalizedBlock: this.finalized };
    this.pendingBets.clear();
    const { removed, reverted } = await store.rollback({ chainId: this.chainId, from: cursor, ancestor, network: this.entry(state), state });
    const depth = Number(cursor.number - ancestor.number);
    logger.warn(
      { chainId: this.chainId, ancestor: ancestor.number, depth, removed: removed.length, reverted: reverted.length },
      "reorg: rolled back to the common ancestor",
    );
    this.cursor = ancestor;
    this.lastWrite = Date.now();
    this.deps.emit({ type: "reorg", chainId: this.chainId, ancestor: ancestor.number, depth, removed, reverted });
    return true;
  }

  /** Waits for a new head (WebSocket) or the polling interval, whichever comes first. */
  private async idle(): Promise<void> {
    if (this.headAnnounced) {
      this.headAnnounced = false;
      return;
    }
    const interval = this.subscribed ? this.deps.network.pollingIntervalMs * 4 : this.deps.network.pollingIntervalMs;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.headAnnounced = false;
        clearTimeout(timer);
        this.deps.signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, interval);
      this.wake = done;
      this.deps.signal.addEventListener("abort", done, { once: true });
    });
  }

  private requireCursor(): BlockRef {
    if (!this.cursor) throw new ChainInconsistentError("cursor not loaded", { chainId: this.chainId });
    return this.cursor;
  }
}
