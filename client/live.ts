// Live views: a GraphQL read kept current by the bet feed, as small stores any UI can subscribe to
// (`getSnapshot` / `subscribe`, the shape React's useSyncExternalStore takes; client/react.ts wraps
// them in hooks). Framework-free, for browsers and Node.
//
// Each view opens its feed first and reads through GraphQL once the feed is live, so whatever
// happens in between shows up in one or the other (see README: "read a wallet without a gap").
// Updates that arrive while a read is in flight wait and are applied on top of it. A bet's state only
// moves forward (PENDING → SETTLED | REFUNDED), so an update older than the read changes nothing.
import type { BetFieldsFragment } from "./generated/graphql.ts";
import type { GraphQLClient } from "./graphql.ts";
import { betsQuery, playerBetsQuery } from "./operations.ts";
import { openBetsFeed, type BetsFeed, type BetsFeedOptions, type BetUpdatePayload, type FeedStatus, type FeedSubscription } from "./realtime.ts";

/** A value that changes over time: read it, be told when it changes, stop it. */
export interface LiveView<T> {
  getSnapshot(): T;
  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Closes the feed behind the view; the snapshot stays as it was. */
  close(): void;
}

/** Where the feed connects (what `openBetsFeed` takes, without what the view decides). */
export type FeedConnection = Omit<BetsFeedOptions, "subscription" | "sinceSeq" | "backlog" | "onUpdate" | "onStatus" | "onResync" | "onError">;

/** What the views need: the GraphQL client and where the feed connects. */
export interface BetsSource {
  api: GraphQLClient;
  feed: FeedConnection;
  /** Opens the feed (default `openBetsFeed`). */
  openFeed?: (options: BetsFeedOptions) => BetsFeed;
}

/** How far a status is along the lifecycle: a bet never goes back. */
const RANK: Record<BetFieldsFragment["status"], number> = { PENDING: 0, SETTLED: 1, REFUNDED: 1 };

const sameBet = (a: { chainId: number; betId: string }, b: { chainId: number; betId: string }) => a.chainId === b.chainId && a.betId === b.betId;

/**
 * One update applied to a list of bets, newest placed first: REMOVED takes the bet out, FINALIZED
 * replaces a listed bet (now `finalized`) and adds none, anything else puts the update's bet in (in
 * its place by `placedBlock`), unless the list already holds a later state.
 */
export function applyBetUpdate(bets: readonly BetFieldsFragment[], update: BetUpdatePayload): BetFieldsFragment[] {
  const index = bets.findIndex((bet) => sameBet(bet, update));
  if (update.type === "REMOVED") return index < 0 ? [...bets] : bets.filter((_, i) => i !== index);
  // FINALIZED only marks a bet already announced final; a bet outside the list stays outside.
  if (update.type === "FINALIZED" && index < 0) return [...bets];
  const next: BetFieldsFragment = update.bet;
  if (index >= 0) {
    if (RANK[next.status] < RANK[bets[index]!.status]) return [...bets];
    return bets.map((bet, i) => (i === index ? next : bet));
  }
  const placed = BigInt(next.placedBlock);
  const at = bets.findIndex((bet) => BigInt(bet.placedBlock) < placed);
  return at < 0 ? [...bets, next] : [...bets.slice(0, at), next, ...bets.slice(at)];
}

function store<T>(initial: T) {
  let state = initial;
  const listeners = new Set<() => void>();
  return {
    get: () => state,
    set(next: T) {
      state = next;
      for (const listener of listeners) listener();
    },
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

interface ReadState {
  /** True until the first read has answered. */
  loading: boolean;
  /** The last read's failure (cleared by the next successful read). */
  error: Error | undefined;
  /** The feed's connection state (`live`, `reconnecting`, …). */
  feed: FeedStatus | undefined;
}

/**
 * A GraphQL read kept current by a feed subscription. `read` runs when the feed is first live, again
 * on a resync, and on the next live after a failed read; `onUpdate` applies one update to the state.
 */
function followRead<S extends ReadState>(
  source: BetsSource,
  subscription: FeedSubscription,
  initial: S,
  read: () => Promise<Partial<S>>,
  onUpdate: (state: S, update: BetUpdatePayload) => S,
): LiveView<S> {
  const view = store(initial);
  /** Updates that arrived while a read was in flight (undefined when none is). */
  let waiting: BetUpdatePayload[] | undefined;
  /** Counts reads: only the latest one started is applied (a resync may overlap a read). */
  let generation = 0;
  /** No successful read yet, or the last one failed: read when the feed is next live. */
  let needsRead = true;
  let closed = false;
  const load = async () => {
    const mine = ++generation;
    waiting ??= [];
    let state: S;
    try {
      const fresh = await read();
      if (closed || mine !== generation) return;
      state = { ...view.get(), ...fresh, loading: false, error: undefined };
      needsRead = false;
    } catch (error) {
      if (closed || mine !== generation) return;
      state = { ...view.get(), loading: false, error: error instanceof Error ? error : new Error(String(error)) };
      needsRead = true;
    }
    for (const update of waiting ?? []) state = onUpdate(state, update);
    waiting = undefined;
    view.set(state);
  };
  const feed = (source.openFeed ?? openBetsFeed)({
    ...source.feed,
    subscription,
    onUpdate: (update) => {
      if (waiting) waiting.push(update);
      else if (!view.get().loading) view.set(onUpdate(view.get(), update));
    },
    onStatus: (status) => {
      if (closed) return;
      view.set({ ...view.get(), feed: status });
      if (status.state === "live" && needsRead && waiting === undefined) void load();
    },
    onResync: () => load(),
  });
  return {
    getSnapshot: view.get,
    subscribe: view.subscribe,
    close() {
      closed = true;
      feed.close();
    },
  };
}

export interface PlayerBetsState extends ReadState {
  /** The wallet's bets, newest first: the first page read, plus what happened since. */
  bets: BetFieldsFragment[];
  /** All the wallet's bets (as read, then counted along with PLACED / REMOVED). */
  totalCount: number;
}

export const INITIAL_PLAYER_BETS: PlayerBetsState = Object.freeze({ loading: true, error: undefined, feed: undefined, bets: [], totalCount: 0 });

/** A wallet's latest bets, live. */
export function followPlayerBets(source: BetsSource, wallet: string, options: { first?: number } = {}): LiveView<PlayerBetsState> {
  const first = options.first ?? 20;
  return followRead<PlayerBetsState>(
    source,
    { wallets: [wallet] },
    INITIAL_PLAYER_BETS,
    async () => {
      const { playerBets } = await source.api.request(playerBetsQuery, { wallet, first });
      return { bets: playerBets.nodes, totalCount: playerBets.totalCount };
    },
    (state, update) => {
      const bets = applyBetUpdate(state.bets, update);
      return { ...state, bets, totalCount: Math.max(0, state.totalCount + bets.length - state.bets.length) };
    },
  );
}

export interface BetState extends ReadState {
  /** The bet, or null while it is unknown (not placed yet, or removed by a reorg). */
  bet: BetFieldsFragment | null;
}

export const INITIAL_BET: BetState = Object.freeze({ loading: true, error: undefined, feed: undefined, bet: null });

/** One bet, live. */
export function followBet(source: BetsSource, chainId: number, betId: string): LiveView<BetState> {
  return followRead<BetState>(
    source,
    { bets: [{ chainId, betId }] },
    INITIAL_BET,
    async () => {
      const { betResults } = await source.api.request(betsQuery, { chainId, betIds: [betId] });
      return { bet: betResults[0] ?? null };
    },
    (state, update) => ({ ...state, bet: applyBetUpdate(state.bet ? [state.bet] : [], update).find((bet) => sameBet(bet, { chainId, betId })) ?? null }),
  );
}

export interface BetFeedState {
  /** The latest updates, newest first, at most `limit`. */
  updates: BetUpdatePayload[];
  feed: FeedStatus | undefined;
  /** The seq to resume from in a later session. */
  lastSeq: string | undefined;
}

export const INITIAL_BET_FEED: BetFeedState = Object.freeze({ updates: [], feed: undefined, lastSeq: undefined });

/** The raw feed of a subscription: its latest updates (with `backlog`, starting with the recent past). */
export function followBetFeed(
  source: Pick<BetsSource, "feed" | "openFeed">,
  subscription: FeedSubscription,
  options: { limit?: number; backlog?: number; sinceSeq?: string } = {},
): LiveView<BetFeedState> {
  const limit = options.limit ?? 50;
  const view = store(INITIAL_BET_FEED);
  const feed = (source.openFeed ?? openBetsFeed)({
    ...source.feed,
    subscription,
    ...(options.backlog === undefined ? {} : { backlog: options.backlog }),
    ...(options.sinceSeq === undefined ? {} : { sinceSeq: options.sinceSeq }),
    onUpdate: (update) => view.set({ ...view.get(), updates: [update, ...view.get().updates].slice(0, limit), lastSeq: update.seq }),
    onStatus: (status) => view.set({ ...view.get(), feed: status }),
  });
  return { getSnapshot: view.get, subscribe: view.subscribe, close: () => feed.close() };
}
