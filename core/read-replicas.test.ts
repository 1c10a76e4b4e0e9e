import { describe, expect, it } from "vitest";
import { isUnreachable } from "./db.ts";
import { type Heads, parseLsn, pinnedIndex, type ReplicaView, replayLagMs, replicaState } from "./read-replicas.ts";

const heads = (entries: [number, number][]): Heads => new Map(entries.map(([chainId, head]) => [BigInt(chainId), BigInt(head)]));
const now = 1_000_000;
const rule = { maxLagBlocks: 5, maxReplayLagMs: 2_000, staleAfterMs: 3_000, now };
const replica = (entries: [number, number][], view: Partial<ReplicaView> = {}): ReplicaView => ({
  heads: heads(entries),
  checkedAt: now - 100,
  up: true,
  ...view,
});

const primary2 = heads([
  [1, 100],
  [2, 50],
]);

describe("replicaState, the routing rule", () => {
  const primary = heads([
    [1, 100],
    [2, 50],
  ]);

  it("serves a replica within the lag limit on every chain and at the floor", () => {
    expect(
      replicaState(
        replica([
          [1, 95],
          [2, 50],
        ]),
        primary,
        heads([[1, 95]]),
        rule,
      ),
    ).toBe("serving");
  });

  it("skips a replica more than maxLagBlocks behind the primary on any chain, or missing a chain", () => {
    expect(
      replicaState(
        replica([
          [1, 94],
          [2, 50],
        ]),
        primary,
        new Map(),
        rule,
      ),
    ).toBe("lagging");
    expect(replicaState(replica([[1, 100]]), primary, new Map(), rule)).toBe("lagging");
  });

  it("skips a replica behind a head already served, even within the lag limit (monotonic head)", () => {
    expect(
      replicaState(
        replica([
          [1, 99],
          [2, 50],
        ]),
        primary,
        heads([[1, 100]]),
        rule,
      ),
    ).toBe("behind-floor");
    expect(
      replicaState(
        replica([
          [1, 100],
          [2, 50],
        ]),
        primary,
        heads([[1, 100]]),
        rule,
      ),
    ).toBe("serving");
  });

  it("skips a replica never checked, down, or silent for longer than staleAfterMs", () => {
    expect(replicaState({ heads: undefined, checkedAt: 0, up: false }, primary, new Map(), rule)).toBe("unchecked");
    expect(
      replicaState(
        replica(
          [
            [1, 100],
            [2, 50],
          ],
          { up: false },
        ),
        primary,
        new Map(),
        rule,
      ),
    ).toBe("down");
    expect(
      replicaState(
        replica(
          [
            [1, 100],
            [2, 50],
          ],
          { checkedAt: now - 3_001 },
        ),
        primary,
        new Map(),
        rule,
      ),
    ).toBe("stale");
  });

  it("without a primary reading, trusts only the floor", () => {
    expect(replicaState(replica([[1, 10]]), undefined, heads([[1, 10]]), rule)).toBe("serving");
    expect(replicaState(replica([[1, 9]]), undefined, heads([[1, 10]]), rule)).toBe("behind-floor");
  });
});

describe("replay lag: what the primary had written that a replica has not replayed", () => {
  it("reads an LSN as a WAL position", () => {
    expect(parseLsn("0/0")).toBe(0n);
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn("0/3000060") < parseLsn("1/0")).toBe(true);
  });

  it("is the age of the oldest primary position the replica has not replayed, 0 when it has all", () => {
    // The primary's positions as the checks read them, oldest first.
    const samples = [
      { at: 1_000, lsn: 100n },
      { at: 2_000, lsn: 100n },
      { at: 3_000, lsn: 250n },
      { at: 4_000, lsn: 250n },
      { at: 5_000, lsn: 400n },
    ];
    expect(replayLagMs(samples, 400n, 5_000)).toBe(0);
    expect(replayLagMs(samples, 500n, 5_000)).toBe(0);
    // Replayed up to 250: misses what the primary had at 5 000, nothing older.
    expect(replayLagMs(samples, 250n, 5_000)).toBe(0);
    expect(replayLagMs(samples, 250n, 5_500)).toBe(500);
    // Replay stopped at 100 while the primary wrote on: behind since the reading at 3 000.
    expect(replayLagMs(samples, 100n, 5_000)).toBe(2_000);
    // An idle primary: a replica that has everything is not behind, however long nothing is written.
    expect(replayLagMs([{ at: 1_000, lsn: 100n }], 100n, 60_000)).toBe(0);
    // Behind every reading kept: at least as old as the oldest.
    expect(replayLagMs(samples, 50n, 5_000)).toBe(4_000);
    // No reading of the primary: unknown, judged by blocks only.
    expect(replayLagMs([], 50n, 5_000)).toBe(0);
  });

  it("skips a replica whose replay lag is over maxReplayLagMs, even at the primary's indexed head", () => {
    const inStep = [
      [1, 100],
      [2, 50],
    ] as [number, number][];
    expect(replicaState(replica(inStep, { replayLagMs: 2_001 }), primary2, new Map(), rule)).toBe("replay-lag");
    expect(replicaState(replica(inStep, { replayLagMs: 2_000 }), primary2, new Map(), rule)).toBe("serving");
  });
});

describe("pinnedIndex: one read pin, one server", () => {
  it("maps a pin to the same replica every time, and pins spread over the replicas", () => {
    expect(pinnedIndex("abc.1", 3)).toBe(pinnedIndex("abc.1", 3));
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) counts[pinnedIndex(`Xy9-_q.${i.toString(36)}`, 3)]!++;
    for (const count of counts) expect(count).toBeGreaterThan(800);
    expect(pinnedIndex("anything", 1)).toBe(0);
  });
});

describe("isUnreachable: which failures a replica read retries on the primary", () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

  it("retries refused, reset, shut-down and recovery-conflict failures", () => {
    for (const error of [
      withCode("connect ECONNREFUSED 127.0.0.1:5433", "ECONNREFUSED"),
      withCode("read ECONNRESET", "ECONNRESET"),
      withCode("terminating connection due to administrator command", "57P01"),
      withCode("canceling statement due to conflict with recovery", "40001"),
      withCode("the database system is starting up", "57P03"),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new Error("Query read timeout"),
    ])
      expect(isUnreachable(error), error.message).toBe(true);
  });

  it("does not retry a statement the server refused for what it is", () => {
    expect(isUnreachable(withCode("canceling statement due to statement timeout", "57014"))).toBe(false);
    expect(isUnreachable(withCode('relation "Bet" does not exist', "42P01"))).toBe(false);
    expect(isUnreachable("ECONNREFUSED")).toBe(false);
  });
});
