import { describe, expect, it } from "vitest";
import { isUnreachable } from "./db.ts";
import { type Heads, type ReplicaView, replicaState } from "./read-replicas.ts";

const heads = (entries: [number, number][]): Heads => new Map(entries.map(([chainId, head]) => [BigInt(chainId), BigInt(head)]));
const now = 1_000_000;
const rule = { maxLagBlocks: 5, staleAfterMs: 3_000, now };
const replica = (entries: [number, number][], view: Partial<ReplicaView> = {}): ReplicaView => ({
  heads: heads(entries),
  checkedAt: now - 100,
  up: true,
  ...view,
});

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
