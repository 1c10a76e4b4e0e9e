// The publisher: reads new outbox rows in seq order and sends each once to every realtime node
// through the fan-out. Wakes on the outbox's NOTIFY (core/outbox.ts `listen`), with a slow poll as
// the safety net; the table is the truth. Several may run (inside nodes or as their own processes,
// bin/publisher.ts): the lock (lock.ts) keeps exactly one active.
//
// On taking over, the new leader starts at the table's head and first sends a heartbeat carrying
// it: nodes that are behind (the old leader died before publishing some rows) read the gap from
// the outbox themselves. While idle it repeats that heartbeat, so a node that missed a message
// notices within one interval.
//
// The active publisher also prunes the outbox (pruner.ts).
//
// Three parts, each with its own state: leadership (acquire the lock, lead, stand down on loss or
// failure, back off), the feed (the published cursor and the messages sent), and the wake-ups that
// end a wait early (NOTIFY, lock loss, stop).
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { Outbox } from "../core/outbox.ts";
import { continueTraced, tracingEnabled } from "../core/tracing.ts";
import type { FeedUpdate } from "./events.ts";
import type { Fanout } from "./fanout.ts";
import type { PublisherLock } from "./lock.ts";
import { OutboxPruner, type PruneSettings } from "./pruner.ts";

export type { PruneSettings } from "./pruner.ts";

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

/** A wait that `wake()` ends early; a wake between waits makes the next one return at once. */
class Wakeup {
  private woken = false;
  private waiter: (() => void) | undefined;

  wake(): void {
    this.woken = true;
    this.waiter?.();
  }

  /** Forget earlier wakes (before reading, so a wake during the read still counts). */
  reset(): void {
    this.woken = false;
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.woken) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiter = done;
    });
  }
}

/** What the active publisher has sent: the cursor (newest seq published) and message counts. */
class FeedCursor {
  seq = 0n;
  readonly messages = { sent: 0, dropped: 0 };
  private lastSent = 0;

  private readonly fanout: Fanout;
  constructor(fanout: Fanout) {
    this.fanout = fanout;
  }

  /** Sends `updates` (none: a heartbeat) after `seq`, and moves past them; `traceparent`: the trace the nodes continue. */
  send(updates: FeedUpdate[], traceparent?: string): void {
    if (this.fanout.publish({ prevSeq: this.seq.toString(), updates, ...(traceparent ? { traceparent } : {}) })) this.messages.sent++;
    else this.messages.dropped++;
    if (updates.length > 0) this.seq = BigInt(updates[updates.length - 1]!.seq);
    this.lastSent = performance.now();
  }

  idleFor(): number {
    return performance.now() - this.lastSent;
  }
}

/**
 * Sends a batch read from the outbox: one message, or when this process traces and the writers
 * stored their trace contexts, one message per writer's commit (its rows are consecutive: the
 * outbox lock), each sent under a span continuing that commit's trace and carrying its own context.
 */
async function sendBatch(feed: FeedCursor, updates: FeedUpdate[], traceparents: readonly (string | null)[]): Promise<void> {
  if (!tracingEnabled() || traceparents.every((t) => t === null)) return feed.send(updates);
  for (let start = 0; start < updates.length; ) {
    let end = start + 1;
    while (end < updates.length && traceparents[end] === traceparents[start]) end++;
    const run = updates.slice(start, end);
    const attributes = { "messaging.batch.message_count": run.length, "bets.seq.first": run[0]!.seq, "bets.seq.last": run.at(-1)!.seq };
    await continueTraced(traceparents[start], "publish bets:feed", "producer", attributes, async (traceparent) => feed.send(run, traceparent));
    start = end;
  }
}

export function createPublisher(deps: PublisherDeps): Publisher {
  const outbox = new Outbox(deps.db);
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const heartbeatMs = deps.heartbeatMs ?? 1000;
  const batchSize = deps.batchSize ?? 200;
  const feed = new FeedCursor(deps.fanout);
  const wakeup = new Wakeup();
  const pruner =
    deps.prune && deps.prune.intervalMs > 0 ? new OutboxPruner({ outbox, logger: deps.logger, settings: deps.prune, published: () => feed.seq }) : undefined;
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  let active = false;
  let lost = false;

  deps.lock.onLost(() => {
    deps.logger.warn("publisher lost its lock: standing down");
    lost = true;
    wakeup.wake();
  });

  /** While holding the lock: publish from the table's head until stopped or the lock is lost. */
  const lead = async () => {
    feed.seq = await outbox.head();
    feed.send([]);
    const unlisten = await outbox.listen(() => wakeup.wake());
    pruner?.start();
    try {
      while (!abort.signal.aborted && !lost) {
        wakeup.reset();
        const { updates: rows, traceparents } = await outbox.afterWithTrace(feed.seq, batchSize);
        if (lost || abort.signal.aborted) break;
        if (rows.length > 0) {
          await sendBatch(feed, rows, traceparents);
          if (rows.length === batchSize) continue;
        } else if (feed.idleFor() >= heartbeatMs) {
          feed.send([]);
        }
        await wakeup.sleep(Math.min(pollIntervalMs, heartbeatMs));
      }
    } finally {
      await pruner?.stop();
      await unlisten().catch(() => undefined);
    }
  };

  /** Leadership: wait for the lock, lead, stand down (backing off after failures), until stopped. */
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
      wakeup.wake();
      await running;
    },
    isActive: () => active,
    publishedSeq: () => feed.seq,
    messages: () => ({ ...feed.messages }),
    pruned: () => pruner?.pruned() ?? 0,
  };
}
