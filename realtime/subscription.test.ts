import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addToState,
  emptyState,
  isFirehose,
  limitViolation,
  matches,
  parseSubscribe,
  parseUnsubscribe,
  removeFromState,
  roomsForState,
  roomsForUpdate,
  DEFAULT_SUBSCRIPTION_LIMITS,
} from "./subscription.ts";

const wallets = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2", "0x00000000000000000000000000000000000000c3"];
const chains = [1, 10, 31337];
const betIds = ["1", "2", "115792089237316195423570985008687907853269984665640564039457584007913129639935"];

const arbitraryState = fc
  .record({
    wallets: fc.subarray(wallets),
    bets: fc.subarray(chains.flatMap((chainId) => betIds.map((betId) => ({ chainId, betId })))),
    chainIds: fc.subarray(chains),
    all: fc.boolean(),
  })
  .map((change) => addToState(emptyState(), change));
const arbitraryUpdate = fc.record({ chainId: fc.constantFrom(...chains), betId: fc.constantFrom(...betIds), player: fc.constantFrom(...wallets) });

describe("rooms", () => {
  it("a socket is in one of an update's rooms exactly when its subscription matches the update", () => {
    fc.assert(
      fc.property(arbitraryState, arbitraryUpdate, (state, update) => {
        const joined = roomsForState(state);
        const inRoom = roomsForUpdate(update).some((room) => joined.has(room));
        expect(inRoom).toBe(matches(state, update));
      }),
      { numRuns: 3000 },
    );
  });

  it("a firehose (firehose.ts counts them) is exactly a state in the `all` room or a chain's room", () => {
    fc.assert(
      fc.property(arbitraryState, (state) => {
        const rooms = [...roomsForState(state)];
        expect(isFirehose(state)).toBe(rooms.some((room) => room === "all" || room.startsWith("c:")));
      }),
      { numRuns: 1000 },
    );
  });

  it("follows the contract's rules for chainIds", () => {
    const [a, b] = wallets as [string, string];
    const chainOnly = addToState(emptyState(), { wallets: [], bets: [], chainIds: [10], all: false });
    expect(matches(chainOnly, { chainId: 10, betId: "1", player: a })).toBe(true);
    expect(matches(chainOnly, { chainId: 1, betId: "1", player: a })).toBe(false);
    const narrowed = addToState(emptyState(), { wallets: [a], bets: [{ chainId: 1, betId: "2" }], chainIds: [10], all: false });
    expect(matches(narrowed, { chainId: 10, betId: "1", player: a })).toBe(true);
    expect(matches(narrowed, { chainId: 10, betId: "1", player: b })).toBe(false);
    expect(matches(narrowed, { chainId: 1, betId: "1", player: a })).toBe(false);
    expect(matches(narrowed, { chainId: 1, betId: "2", player: b })).toBe(false);
    expect(matches(emptyState(), { chainId: 1, betId: "1", player: a })).toBe(false);
    expect(roomsForState(emptyState()).size).toBe(0);
  });
});

describe("requests", () => {
  it("normalises addresses through the shared scalars and keeps uint256 ids exact", () => {
    const parsed = parseSubscribe({
      wallets: ["0x52908400098527886E0F7030069857D2E4169EE7", "0xDE709F2102306220921060314715629080E2FB77".toLowerCase()],
      bets: [{ chainId: 1, betId: betIds[2] }],
      sinceSeq: "42",
    });
    expect(parsed).toEqual({
      ok: true,
      value: {
        wallets: ["0x52908400098527886e0f7030069857d2e4169ee7", "0xde709f2102306220921060314715629080e2fb77"],
        bets: [{ chainId: 1, betId: betIds[2] }],
        chainIds: [],
        all: false,
        sinceSeq: 42n,
      },
    });
  });

  it("names the offending field", () => {
    expect(
      parseSubscribe({
        bets: [
          { chainId: 1, betId: "1" },
          { chainId: 1, betId: "1e3" },
        ],
      }),
    ).toEqual({ ok: false, message: expect.stringMatching(/^bets\[1\]\.betId: /) });
    expect(parseSubscribe({ chainIds: [2 ** 53] })).toEqual({ ok: false, message: expect.stringMatching(/^chainIds\[0\]: /) });
    expect(parseSubscribe({ sinceSeq: "01" })).toEqual({ ok: false, message: expect.stringMatching(/^sinceSeq: /) });
    expect(parseUnsubscribe({ sinceSeq: "1" })).toEqual({ ok: false, message: expect.stringMatching(/sinceSeq/) });
    expect(parseSubscribe(undefined)).toEqual({ ok: false, message: "The payload must be an object" });
  });

  it("unsubscribes item by item, or from everything with {}", () => {
    const [a, b] = wallets as [string, string];
    const state = addToState(emptyState(), { wallets: [a, b], bets: [{ chainId: 1, betId: "1" }], chainIds: [1], all: true });
    const fewer = removeFromState(state, { wallets: [a], bets: [], chainIds: [], all: true });
    expect([...fewer.wallets]).toEqual([b]);
    expect(fewer.all).toBe(false);
    expect(fewer.bets.size).toBe(1);
    expect(removeFromState(state, { wallets: [], bets: [], chainIds: [], all: false })).toEqual(emptyState());
  });

  it("counts wallets + bets against the limit", () => {
    const many = Array.from({ length: 199 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    const state = addToState(emptyState(), { wallets: many, bets: [{ chainId: 1, betId: "1" }], chainIds: [], all: false });
    expect(limitViolation(state, DEFAULT_SUBSCRIPTION_LIMITS)).toBeUndefined();
    const over = addToState(state, { wallets: [], bets: [{ chainId: 1, betId: "2" }], chainIds: [], all: false });
    expect(limitViolation(over, DEFAULT_SUBSCRIPTION_LIMITS)).toMatch(/at most 200/);
  });
});
