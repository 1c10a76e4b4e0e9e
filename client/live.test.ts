// The live views and the React hooks over them, without a server: the feed and the GraphQL client
// are scripted, so the order in which updates and reads arrive is the test's to choose.
import fc from "fast-check";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { BetFieldsFragment } from "./generated/graphql.ts";
import type { GraphQLClient } from "./graphql.ts";
import { applyBetUpdate, followBet, followPlayerBets, type BetsSource } from "./live.ts";
import { usePlayerBets } from "./react.ts";
import type { BetsFeed, BetsFeedOptions, BetUpdatePayload } from "./realtime.ts";

const player = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
let seq = 0;

const hex = (value: number, bytes: number) => `0x${value.toString(16).padStart(bytes * 2, "0")}`;

/** An update of bet `betId` placed in `placedBlock`, with the bet as that update carries it. */
function update(type: BetUpdatePayload["type"], betId: string, placedBlock: number): BetUpdatePayload {
  const status = type === "SETTLED" ? "SETTLED" : type === "REFUNDED" ? "REFUNDED" : "PENDING";
  const ended = status !== "PENDING";
  const bet: BetUpdatePayload["bet"] = {
    chainId: 31337,
    betId,
    player,
    token: hex(0, 20),
    stake: "1500000000000000000",
    game: "coinflip",
    clientSeed: hex(Number(betId) + 1, 32),
    serverSeedHash: hex(Number(betId) + 2, 32),
    status,
    placedBlock: String(placedBlock),
    placedTx: hex(Number(betId) + 3, 32),
    placedAt: "1700000200",
    settledBlock: status === "SETTLED" ? String(placedBlock + 1) : null,
    settledTx: status === "SETTLED" ? hex(Number(betId) + 4, 32) : null,
    settledAt: status === "SETTLED" ? "1700000202" : null,
    refundedBlock: status === "REFUNDED" ? String(placedBlock + 1) : null,
    refundedTx: status === "REFUNDED" ? hex(Number(betId) + 5, 32) : null,
    refundedAt: status === "REFUNDED" ? "1700000202" : null,
    confirmations: ended ? "1" : "2",
    finalized: false,
    result:
      status === "SETTLED"
        ? {
            outcome: "12345678901234567890",
            won: true,
            payout: "3000000000000000000",
            proof: { protocol: "groth16", curve: "bn128", piA: [], piB: [], piC: [], publicSignals: [], solidityCalldata: "0x", verified: true },
          }
        : null,
  };
  return { seq: String(++seq), type, chainId: 31337, betId, bet };
}

/** A scripted feed (what `openFeed` opened) and a GraphQL client whose answers the test releases. */
function scripted() {
  const feeds: BetsFeedOptions[] = [];
  let closed = 0;
  const reads: { resolve(data: unknown): void }[] = [];
  const api: GraphQLClient = {
    request: () => new Promise((resolve) => reads.push({ resolve: resolve as (data: unknown) => void })),
  };
  const source: BetsSource = {
    api,
    feed: { urls: ["http://127.0.0.1:1"], path: "/socket.io" },
    openFeed: (options): BetsFeed => {
      feeds.push(options);
      return {
        lastSeq: undefined,
        stats: { delivered: 0, duplicatesDropped: 0, reconnects: 0 },
        subscribe: async () => undefined,
        unsubscribe: async () => undefined,
        close: () => void closed++,
      };
    },
  };
  const live = (feed: BetsFeedOptions) => feed.onStatus?.({ state: "live", url: "http://127.0.0.1:1", attempt: 0 });
  return { source, feeds, reads, live, closed: () => closed };
}

const page = (bets: BetFieldsFragment[], totalCount = bets.length) => ({
  playerBets: { totalCount, pageInfo: { hasNextPage: false, endCursor: null }, nodes: bets },
  pendingBetCount: 0,
});

describe("applyBetUpdate", () => {
  it("ends with each bet's last state, newest placed first, whatever stale updates are replayed", () => {
    // Per bet: PLACED, then maybe SETTLED or REFUNDED, then maybe REMOVED; bets interleaved at random.
    const lifecycle = fc.tuple(fc.constantFrom<("SETTLED" | "REFUNDED")[]>([], ["SETTLED"], ["REFUNDED"]), fc.boolean());
    fc.assert(
      fc.property(fc.array(lifecycle, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 30 }), fc.nat(), (bets, order, staleAt) => {
        const queues = bets.map(([ends, removed], i) => {
          const kinds: BetUpdatePayload["type"][] = ["PLACED", ...ends, ...(removed ? (["REMOVED"] as const) : [])];
          return kinds.map((kind) => update(kind, String(i + 1), 100 + i));
        });
        const delivered: BetUpdatePayload[] = [];
        const open = () => queues.filter((queue) => queue.length > 0);
        for (const pick of order) if (open().length > 0) delivered.push(open()[pick % open().length]!.shift()!);
        for (const queue of queues) delivered.push(...queue.splice(0));
        let list: BetFieldsFragment[] = [];
        for (const u of delivered) list = applyBetUpdate(list, u);
        // A replayed update from before the end (an overlap between a read and the feed) changes no bet's state.
        const kept = delivered.filter((u) => u.type !== "REMOVED" && list.some((bet) => bet.betId === u.betId));
        const stale = kept[staleAt % Math.max(1, kept.length)];
        if (stale) {
          expect(applyBetUpdate(list, stale).map((bet) => [bet.betId, bet.status])).toEqual(list.map((bet) => [bet.betId, bet.status]));
        }
        const expected = bets
          .map(([ends, removed], i) => ({ betId: String(i + 1), status: ends[0] ?? "PENDING", removed }))
          .filter((bet) => !bet.removed)
          .reverse();
        expect(list.map((bet) => ({ betId: bet.betId, status: bet.status }))).toEqual(expected.map(({ betId, status }) => ({ betId, status })));
      }),
      { numRuns: 200 },
    );
  });
});

describe("followPlayerBets", () => {
  it("reads once the feed is live and applies the updates that came during the read on top of it", async () => {
    const { source, feeds, reads, live, closed } = scripted();
    const view = followPlayerBets(source, player, { first: 5 });
    let changes = 0;
    view.subscribe(() => changes++);
    expect(feeds).toHaveLength(1);
    expect(feeds[0]!.subscription).toEqual({ wallets: [player] });
    expect(reads).toHaveLength(0); // not before the feed is live: a gap would open in between
    live(feeds[0]!);
    expect(reads).toHaveLength(1);
    expect(view.getSnapshot().loading).toBe(true);

    const placed1 = update("PLACED", "1", 100);
    const placed2 = update("PLACED", "2", 101);
    const settled1 = update("SETTLED", "1", 100);
    feeds[0]!.onUpdate(placed2, { replayed: false }); // during the read
    feeds[0]!.onUpdate(settled1, { replayed: false });
    expect(view.getSnapshot().bets).toEqual([]);
    reads[0]!.resolve(page([placed1.bet], 7)); // the read saw bet 1 still pending
    await new Promise((resolve) => setImmediate(resolve));

    const state = view.getSnapshot();
    expect(state.loading).toBe(false);
    expect(state.bets.map((bet) => [bet.betId, bet.status])).toEqual([
      ["2", "PENDING"],
      ["1", "SETTLED"],
    ]);
    expect(state.totalCount).toBe(8);
    expect(changes).toBeGreaterThan(0);

    feeds[0]!.onUpdate(update("REMOVED", "2", 101), { replayed: false });
    expect(view.getSnapshot().bets.map((bet) => bet.betId)).toEqual(["1"]);
    expect(view.getSnapshot().totalCount).toBe(7);
    view.close();
    expect(closed()).toBe(1);
  });

  it("reads again on a resync, and reports a failed read", async () => {
    const { source, feeds, reads, live } = scripted();
    const view = followPlayerBets(source, player);
    live(feeds[0]!);
    reads[0]!.resolve(page([update("PLACED", "1", 100).bet]));
    await new Promise((resolve) => setImmediate(resolve));
    void feeds[0]!.onResync?.({ seq: "9", code: "REPLAY_WINDOW_EXCEEDED" });
    expect(reads).toHaveLength(2);
    reads[1]!.resolve(page([update("PLACED", "3", 103).bet, update("REFUNDED", "1", 100).bet]));
    await new Promise((resolve) => setImmediate(resolve));
    expect(view.getSnapshot().bets.map((bet) => [bet.betId, bet.status])).toEqual([
      ["3", "PENDING"],
      ["1", "REFUNDED"],
    ]);
  });

  it("applies only the latest of overlapping reads, and reads again on the next live after a failed read", async () => {
    const { source, feeds, reads, live } = scripted();
    const view = followPlayerBets(source, player);
    live(feeds[0]!);
    void feeds[0]!.onResync?.({ seq: "9", code: "REPLAY_WINDOW_EXCEEDED" }); // while the first read is in flight
    feeds[0]!.onUpdate(update("PLACED", "5", 105), { replayed: false });
    expect(reads).toHaveLength(2);
    reads[1]!.resolve(page([update("PLACED", "4", 104).bet]));
    reads[0]!.resolve(page([update("PLACED", "1", 100).bet])); // older, answers last: ignored
    await new Promise((resolve) => setImmediate(resolve));
    expect(view.getSnapshot().bets.map((bet) => bet.betId)).toEqual(["5", "4"]);
    expect(view.getSnapshot().error).toBeUndefined();

    let calls = 0;
    const failing = scripted();
    failing.source.api = {
      request: () => (++calls === 1 ? Promise.reject(new Error("HTTP 503")) : Promise.resolve(page([update("PLACED", "7", 107).bet]) as never)),
    };
    const broken = followPlayerBets(failing.source, player);
    failing.live(failing.feeds[0]!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(broken.getSnapshot()).toMatchObject({ loading: false, bets: [] });
    expect(broken.getSnapshot().error?.message).toBe("HTTP 503");
    failing.live(failing.feeds[0]!); // reconnected
    await new Promise((resolve) => setImmediate(resolve));
    expect(broken.getSnapshot().error).toBeUndefined();
    expect(broken.getSnapshot().bets.map((bet) => bet.betId)).toEqual(["7"]);
    failing.live(failing.feeds[0]!); // a later reconnect: the replay keeps it current, no read
    expect(calls).toBe(2);
  });
});

describe("followBet", () => {
  it("follows one bet from unknown to settled to removed", async () => {
    const { source, feeds, reads, live } = scripted();
    const view = followBet(source, 31337, "4");
    expect(feeds[0]!.subscription).toEqual({ bets: [{ chainId: 31337, betId: "4" }] });
    live(feeds[0]!);
    reads[0]!.resolve({ betResults: [null] });
    await new Promise((resolve) => setImmediate(resolve));
    expect(view.getSnapshot()).toMatchObject({ loading: false, bet: null });
    feeds[0]!.onUpdate(update("PLACED", "4", 104), { replayed: false });
    feeds[0]!.onUpdate(update("SETTLED", "4", 104), { replayed: false });
    expect(view.getSnapshot().bet?.status).toBe("SETTLED");
    expect(view.getSnapshot().bet?.result?.won).toBe(true);
    feeds[0]!.onUpdate(update("REMOVED", "4", 104), { replayed: false });
    expect(view.getSnapshot().bet).toBeNull();
  });
});

function PlayerBets({ source }: { source: BetsSource }) {
  const { loading, bets } = usePlayerBets(source, player);
  return createElement("p", null, loading ? "loading" : `${bets.length} bets`);
}

describe("React hooks", () => {
  it("render the loading state on the server, without opening a feed", () => {
    const { source, feeds } = scripted();
    expect(renderToString(createElement(PlayerBets, { source }))).toBe("<p>loading</p>");
    expect(feeds).toHaveLength(0);
  });
});

describe("FINALIZED", () => {
  it("marks the listed bet final, keeps its place, and adds no bet the list does not hold", () => {
    const settled = update("SETTLED", "7", 100);
    const other = update("PLACED", "8", 101);
    const list = applyBetUpdate(applyBetUpdate([], settled), other);
    const final = { ...settled, seq: String(++seq), type: "FINALIZED" as const, bet: { ...settled.bet, confirmations: "3", finalized: true } };
    const next = applyBetUpdate(list, final);
    expect(next.map((bet) => [bet.betId, bet.status, bet.finalized])).toEqual([
      ["8", "PENDING", false],
      ["7", "SETTLED", true],
    ]);
    // A bet older than the page read: its FINALIZED does not bring it in (nor change totalCount).
    const outside = update("SETTLED", "3", 50);
    expect(applyBetUpdate(next, { ...outside, type: "FINALIZED", bet: { ...outside.bet, finalized: true } })).toEqual(next);
  });
});
