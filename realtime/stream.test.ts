import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import type { FeedMessage, FeedUpdate } from "./events.ts";
import type { ReadOptions } from "../core/outbox.ts";
import { UpdateStream } from "./stream.ts";
import { eventually } from "../test/eventually.ts";
import { fakeBet, wallet } from "../test/outbox.ts";

const update = (seq: number): FeedUpdate => {
  const player = wallet(seq % 3);
  return { seq: String(seq), type: "PLACED", chainId: 1, betId: String(seq), player, bet: fakeBet({ chainId: 1, betId: String(seq), player }) };
};

/** An outbox holding seqs 1..n, counting reads. */
function fakeOutbox(n: number) {
  const rows = Array.from({ length: n }, (_, i) => update(i + 1));
  const outbox = {
    reads: 0,
    async after(after: bigint, options: ReadOptions) {
      outbox.reads++;
      return rows.filter((r) => BigInt(r.seq) > after && (options.upTo === undefined || BigInt(r.seq) <= options.upTo)).slice(0, options.limit);
    },
  };
  return outbox;
}

function setup(n: number, startSeq = 0n) {
  const outbox = fakeOutbox(n);
  const delivered: number[] = [];
  const stream = new UpdateStream({ outbox, logger: silentLogger(), startSeq, pageSize: 4, deliver: (u) => delivered.push(Number(u.seq)) });
  const feed = (prevSeq: number, ...seqs: number[]): FeedMessage => ({ prevSeq: String(prevSeq), updates: seqs.map(update) });
  return { outbox, delivered, stream, feed };
}

/** Until `delivered` holds `count` seqs: gap reads go through the (async) outbox, so wait for them by what they deliver. */
const deliveredCount = (delivered: number[], count: number) =>
  eventually(
    () => delivered.length >= count,
    10_000,
    () => `${count} updates (have ${delivered.length})`,
    5,
  );

describe("UpdateStream", () => {
  it("delivers each seq once, in order, and drops repeats", async () => {
    const { stream, delivered, feed, outbox } = setup(10);
    stream.onMessage(feed(0, 1, 2, 3));
    stream.onMessage(feed(3, 4));
    stream.onMessage(feed(2, 3, 4, 5)); // a new leader repeating part of a batch
    stream.onMessage(feed(0, 1)); // a zombie leader
    // Without a gap nothing waits on the outbox: delivered on the spot.
    expect(delivered).toEqual([1, 2, 3, 4, 5]);
    expect(outbox.reads).toBe(0);
    expect(stream.lastSeq).toBe(5n);
  });

  it("reads a gap from the outbox before going on, holding later messages", async () => {
    const { stream, delivered, feed } = setup(20);
    stream.onMessage(feed(0, 1));
    stream.onMessage(feed(9, 10, 11)); // 2..9 never arrived
    stream.onMessage(feed(11, 12));
    await deliveredCount(delivered, 12);
    expect(delivered).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(stream.healed).toBe(8);
    stream.onMessage(feed(15)); // a heartbeat ahead
    await deliveredCount(delivered, 15);
    expect(delivered).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it("buffers for open sinks and catches up on demand", async () => {
    const { stream, delivered, feed } = setup(20);
    const sink = stream.openSink((u) => Number(u.seq) % 2 === 0);
    stream.onMessage(feed(0, 1, 2));
    await stream.catchUp(6n);
    expect(delivered).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sink.buffer.map((u) => Number(u.seq))).toEqual([2, 4, 6]);
    stream.closeSink(sink);
    stream.onMessage(feed(6, 7, 8));
    expect(sink.buffer).toHaveLength(3);
  });

  it("ignores malformed messages and collapses a long backlog into one read", async () => {
    const { stream, delivered, feed } = setup(2000);
    stream.onMessage({ prevSeq: 5, updates: [] } as unknown as FeedMessage);
    stream.onMessage({ prevSeq: "0", updates: [{ seq: 1 }] } as unknown as FeedMessage);
    expect(delivered).toEqual([]);
    stream.onMessage(feed(100)); // starts a gap read
    for (let seq = 101; seq <= 1500; seq++) stream.onMessage(feed(seq - 1, seq));
    await deliveredCount(delivered, 1500);
    expect(delivered).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
  });
});
