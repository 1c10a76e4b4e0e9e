// The publisher: reads new outbox rows in seq order and sends each once to every realtime node
// through the fan-out. Wakes on PostgreSQL NOTIFY `bet_updates` (the outbox's trigger), with a slow
// poll as the safety net; the table is the truth. Several may run (inside nodes or as their own
// processes, realtime/publisher-main.ts): the lock (lock.ts) keeps exactly one active.
//
// On taking over, the new leader starts at the table's head and first sends a heartbeat carrying
// it: nodes that are behind (the old leader died before publishing some rows) read the gap from
// the outbox themselves. While idle it repeats that heartbeat, so a node that missed a message
// notices within one interval.
//
// The active publisher also prunes the outbox (`prune`): every interval, in batches, the rows no
// resume can be served from any more (outbox.ts `prune`, the complement of the replay window).
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import type { FeedUpdate } from "./events.ts";
import type { Fanout } from "./fanout.ts";
import type { PublisherLock } from "./lock.ts";
import { Outbox, type Retention } from "./outbox.ts";

export const NOTIFY_CHANNEL = "bet_updates";

export interface PublisherDeps {
  /** PGlite: the app's own Database object (one connection, shared). */
  db: Database;
  fanout: Fanout;
  lock: PublisherLock;
  logger: Logger;
  /** Safety-net poll when no NOTIFY arrives (default 1000 ms). */
  pollIntervalMs?: number;
  /** Heartbeat when idle (default 1000 ms). */
  heartbeatMs?: number;
  /** Rows per read and per feed message (default 200). */
  batchSize?: number;
  /** Outbox pruning while active (unset, or intervalMs 0: none). `retention` must be the nodes' replay window. */
  prune?: PruneSettings;
}

export interface PruneSettings {
  intervalMs: number;
  /** Rows per DELETE; a sweep repeats full batches until the prunable rows are gone. */
  batchSize: number;
  retention: Retention;
}

export interface Publisher {
  start(): void;
  stop(): Promise<void>;
  isActive(): boolean;
  /** The newest seq this process has published (0 before it was ever active). */
  publishedSeq(): bigint;
  /** Feed messages sent, and dropped because the fan-out was down (nodes read those rows themselves). */
  messages(): { sent: number; dropped: number };
  /** Outbox rows this process has pruned. */
  pruned(): number;
}

export function createPublisher(deps: PublisherDeps): Publisher {
  const outbox = new Outbox(deps.db);
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const heartbeatMs = deps.heartbeatMs ?? 1000;
  const batchSize = deps.batchSize ?? 200;
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  let active = false;
  let lost = false;
  let cursor = 0n;

  // Wake-ups: a flag (set by NOTIFY, lock loss or stop) and the waiter it resolves.
  let woken = false;
  let wakeWaiter: (() => void) | undefined;
  const wake = () => {
    woken = true;
    wakeWaiter?.();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeWaiter = undefined;
        resolve();
      }
      wakeWaiter = done;
    });

  deps.lock.onLost(() => {
    deps.logger.warn("publisher lost its lock: standing down");
    lost = true;
    wake();
  });

  const messages = { sent: 0, dropped: 0 };
  const publish = (prevSeq: bigint, updates: FeedUpdate[]) => {
    if (deps.fanout.publish({ prevSeq: prevSeq.toString(), updates })) messages.sent++;
    else messages.dropped++;
  };

  let pruned = 0;
  /** Prunes every `intervalMs` (first at once) until the returned function is called; it resolves once the sweep in progress ends. */
  const startPruning = (settings: PruneSettings): (() => Promise<void>) => {
    let stopped = false;
    let interrupt: (() => void) | undefined;
    const sweep = async () => {
      let rows = 0;
      for (;;) {
        const batch = await outbox.prune(settings.retention, { batchSize: settings.batchSize, keepAbove: cursor });
        rows += batch;
        pruned += batch;
        if (batch < settings.batchSize || stopped || lost) break;
      }
      if (rows > 0) deps.logger.info({ rows, oldestSeq: (await outbox.oldest())?.toString() }, "pruned the outbox");
    };
    const loop = (async () => {
      while (!stopped) {
        await sweep().catch((error: unknown) => deps.logger.warn({ err: error }, "pruning the outbox failed"));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, settings.intervalMs);
          interrupt = () => (clearTimeout(timer), resolve());
        });
      }
    })();
    return () => {
      stopped = true;
      interrupt?.();
      return loop;
    };
  };

  const lead = async () => {
    cursor = await outbox.head();
    publish(cursor, []);
    const unlisten = await deps.db.listen(NOTIFY_CHANNEL, wake);
    const stopPruning = deps.prune && deps.prune.intervalMs > 0 ? startPruning(deps.prune) : undefined;
    try {
      let lastSent = performance.now();
      while (!abort.signal.aborted && !lost) {
        woken = false;
        const rows = await outbox.after(cursor, { limit: batchSize });
        if (lost || abort.signal.aborted) break;
        if (rows.length > 0) {
          publish(cursor, rows);
          cursor = BigInt(rows[rows.length - 1]!.seq);
          lastSent = performance.now();
          if (rows.length === batchSize) continue;
        } else if (performance.now() - lastSent >= heartbeatMs) {
          publish(cursor, []);
          lastSent = performance.now();
        }
        await sleep(Math.min(pollIntervalMs, heartbeatMs));
      }
    } finally {
      await stopPruning?.();
      await unlisten().catch(() => undefined);
    }
  };

  const loop = async () => {
    for (let failures = 0; !abort.signal.aborted; ) {
      try {
        await deps.lock.acquire(abort.signal);
      } catch {
        continue; // aborted (the loop ends) or retried inside acquire
      }
      lost = false;
      active = true;
      deps.logger.info({ lock: deps.lock.kind, fanout: deps.fanout.kind }, "publisher active");
      try {
        await lead();
        failures = 0;
      } catch (error) {
        failures++;
        deps.logger.error({ err: error }, "publisher failed; standing down");
      } finally {
        active = false;
        await deps.lock.release();
      }
      if (!abort.signal.aborted) await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 200 * 2 ** Math.min(failures, 5))));
    }
  };

  return {
    start() {
      running ??= loop();
    },
    async stop() {
      abort.abort();
      wake();
      await running;
    },
    isActive: () => active,
    publishedSeq: () => cursor,
    messages: () => ({ ...messages }),
    pruned: () => pruned,
  };
}
