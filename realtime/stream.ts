// A realtime node's view of the update stream: every outbox row, once, in seq order, whatever the
// feed does (late, repeated after a publisher failover, or missing messages: Redis Pub/Sub is
// at-most-once). The feed is only a fast path; the outbox table is the truth:
//
// - an update with seq ≤ lastSeq was already delivered here: dropped;
// - a message whose prevSeq is ahead of lastSeq means this node missed something: the gap is read
//   from the outbox and delivered first (the feed waits meanwhile);
// - `catchUp(seq)` does the same on demand, so a resume never waits for a slow publisher.
//
// Sockets that are replaying (connection.ts) register a sink: every delivered update that matches
// them is buffered instead of reaching them through rooms, and flushed when their replay is done.
import type { Logger } from "../core/logger.ts";
import type { FeedMessage, FeedUpdate } from "./events.ts";
import type { Outbox } from "../core/outbox.ts";

export interface ReplaySink {
  matches: (update: FeedUpdate) => boolean;
  buffer: FeedUpdate[];
}

export interface UpdateStreamOptions {
  outbox: Pick<Outbox, "after">;
  logger: Logger;
  /** Where this node starts: updates up to here are not delivered live. */
  startSeq: bigint;
  /** Called once per update, in seq order: the node's fan-out to its rooms. */
  deliver: (update: FeedUpdate) => void;
  /** Rows per outbox read when healing (default 500). */
  pageSize?: number;
}

const RETRY_MS = [100, 500, 1_000, 2_000, 5_000];
/** Feed messages held while a gap is read; beyond this they collapse into "read up to seq N". */
const MAX_QUEUE = 1_000;

function isFeedMessage(value: unknown): value is FeedMessage {
  if (typeof value !== "object" || value === null) return false;
  const { prevSeq, updates } = value as { prevSeq?: unknown; updates?: unknown };
  return (
    typeof prevSeq === "string" &&
    /^(0|[1-9][0-9]*)$/.test(prevSeq) &&
    Array.isArray(updates) &&
    updates.every((u: { seq?: unknown }) => typeof u?.seq === "string" && /^[1-9][0-9]*$/.test(u.seq))
  );
}

export class UpdateStream {
  private seq: bigint;
  private readonly queue: FeedMessage[] = [];
  private healing: Promise<void> | undefined;
  private readonly sinks = new Set<ReplaySink>();
  private closed = false;
  private readonly pageSize: number;
  /** Updates read from the outbox because the feed had not brought them (for tests and metrics). */
  healed = 0;
  /** Updates delivered to this node's rooms, from the feed or the outbox (for metrics). */
  delivered = 0;

  private readonly options: UpdateStreamOptions;
  constructor(options: UpdateStreamOptions) {
    this.options = options;
    this.seq = options.startSeq;
    this.pageSize = options.pageSize ?? 500;
  }

  /** The newest seq delivered by this node. */
  get lastSeq(): bigint {
    return this.seq;
  }

  onMessage(message: FeedMessage): void {
    if (this.closed) return;
    if (!isFeedMessage(message)) {
      this.options.logger.warn("ignoring a malformed feed message");
      return;
    }
    this.queue.push(message);
    if (this.queue.length > MAX_QUEUE) {
      // The outbox is stuck (a long gap read): keep only where the feed has got to; the table has the rest.
      const newest = this.queue.reduce((max, m) => {
        const last = m.updates.at(-1)?.seq ?? m.prevSeq;
        return BigInt(last) > max ? BigInt(last) : max;
      }, 0n);
      this.queue.splice(0, this.queue.length, { prevSeq: newest.toString(), updates: [] });
    }
    this.pump();
  }

  /**
   * Local delivery (the feed is down): everything up to `seq` is committed, so read and deliver it
   * from the outbox. Queued behind feed messages like a heartbeat, so order and dedup hold.
   */
  advanceTo(seq: bigint): void {
    if (seq > this.seq) this.onMessage({ prevSeq: seq.toString(), updates: [] });
  }

  openSink(matches: ReplaySink["matches"]): ReplaySink {
    const sink: ReplaySink = { matches, buffer: [] };
    this.sinks.add(sink);
    return sink;
  }

  closeSink(sink: ReplaySink): void {
    this.sinks.delete(sink);
  }

  /** Resolves once every update up to `seq` has been delivered here (reading the outbox if need be). */
  async catchUp(seq: bigint): Promise<void> {
    while (this.seq < seq) {
      if (this.closed) throw new Error("update stream closed");
      if (this.healing) await this.healing;
      else this.startHeal(seq);
    }
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.sinks.clear();
  }

  private pump(): void {
    while (!this.healing && !this.closed) {
      const message = this.queue[0];
      if (!message) return;
      const prevSeq = BigInt(message.prevSeq);
      if (prevSeq > this.seq) {
        this.startHeal(prevSeq); // the message stays queued until the gap is filled
        return;
      }
      this.queue.shift();
      for (const update of message.updates) {
        if (BigInt(update.seq) > this.seq) this.emit(update);
      }
    }
  }

  private startHeal(upTo: bigint): void {
    this.healing = this.heal(upTo).finally(() => {
      this.healing = undefined;
      this.pump();
    });
  }

  private async heal(upTo: bigint): Promise<void> {
    let attempt = 0;
    while (this.seq < upTo && !this.closed) {
      try {
        const rows = await this.options.outbox.after(this.seq, { upTo, limit: this.pageSize });
        for (const update of rows) {
          if (BigInt(update.seq) > this.seq) {
            this.healed++;
            this.emit(update);
          }
        }
        // Everything up to `upTo` is committed (it was published, or seen by a replay): done.
        if (rows.length < this.pageSize && this.seq < upTo) this.seq = upTo;
        attempt = 0;
      } catch (error) {
        const delay = RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]!;
        this.options.logger.warn({ err: error, upTo: upTo.toString(), retryInMs: delay }, "reading missed updates from the outbox failed");
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private emit(update: FeedUpdate): void {
    this.seq = BigInt(update.seq);
    this.delivered++;
    for (const sink of this.sinks) if (sink.matches(update)) sink.buffer.push(update);
    try {
      this.options.deliver(update);
    } catch (error) {
      this.options.logger.error({ err: error, seq: update.seq }, "delivering an update failed");
    }
  }
}
