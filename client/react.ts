// React hooks over the live views (client/live.ts), the package's `./react` subpath; `react` (18 or
// later) is an optional peer dependency, needed only here.
//
//   const source = { api: createGraphQLClient({ url: "/graphql" }), feed: { urls: [location.origin], path: "/socket.io" } };
//   const { bets, loading, error, feed } = usePlayerBets(source, wallet, { first: 20 });
//
// A view opens when the component mounts and closes when it unmounts or its arguments change (the
// feed's URLs and path, the wallet or bet, the options); the source's GraphQL client is the one
// given at that moment. On the server (renderToString) the hooks return the initial "loading" state
// and open nothing.
import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import {
  followBet,
  followBetFeed,
  followPlayerBets,
  INITIAL_BET,
  INITIAL_BET_FEED,
  INITIAL_PLAYER_BETS,
  type BetFeedState,
  type BetState,
  type BetsSource,
  type LiveView,
  type PlayerBetsState,
} from "./live.ts";
import type { FeedSubscription } from "./realtime.ts";
import type { GraphQLClient } from "./graphql.ts";
import { createPager, type PagedQuery, type PagerState } from "./pages.ts";

export type { BetFeedState, BetState, BetsSource, FeedConnection, PlayerBetsState } from "./live.ts";

const noSubscription = () => () => undefined;

/** The snapshot of the view `open` gives, reopened whenever `key` changes. */
function useLiveView<T>(open: () => LiveView<T>, initial: T, key: string): T {
  const [view, setView] = useState<LiveView<T> | undefined>(undefined);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names everything `open` depends on; a new closure alone reopens nothing
  useEffect(() => {
    const opened = open();
    setView(opened);
    return () => {
      opened.close();
      setView(undefined);
    };
  }, [key]);
  const subscribe = useCallback((listener: () => void) => (view ? view.subscribe(listener) : noSubscription()), [view]);
  const snapshot = useCallback(() => (view ? view.getSnapshot() : initial), [view, initial]);
  return useSyncExternalStore(subscribe, snapshot, () => initial);
}

const feedKey = (source: Pick<BetsSource, "feed">) => JSON.stringify([source.feed.urls, source.feed.path ?? null, source.feed.transports ?? null]);

/** A wallet's latest bets (newest first), read through GraphQL and kept current by the feed. */
export function usePlayerBets(source: BetsSource, wallet: string, options: { first?: number } = {}): PlayerBetsState {
  return useLiveView(
    () => followPlayerBets(source, wallet, options),
    INITIAL_PLAYER_BETS,
    JSON.stringify([feedKey(source), wallet.toLowerCase(), options.first ?? null]),
  );
}

/** One bet, read through GraphQL and kept current by the feed; `bet` is null while it is unknown. */
export function useBet(source: BetsSource, chainId: number, betId: string): BetState {
  return useLiveView(() => followBet(source, chainId, betId), INITIAL_BET, JSON.stringify([feedKey(source), chainId, betId]));
}

/** The latest updates of a feed subscription (newest first), e.g. `{ all: true }` for a ticker. */
export function useBetFeed(
  source: Pick<BetsSource, "feed" | "openFeed">,
  subscription: FeedSubscription,
  options: { limit?: number; backlog?: number } = {},
): BetFeedState {
  return useLiveView(
    () => followBetFeed(source, subscription, options),
    INITIAL_BET_FEED,
    JSON.stringify([feedKey(source), subscription, options.limit ?? null, options.backlog ?? null]),
  );
}

const INITIAL_PAGER: PagerState<never> = { items: [], totalCount: undefined, hasMore: true, loading: true, error: undefined };

/**
 * An infinite list over `playerBets` or `bets` (client/pages.ts `playerBetsPages` / `betsPages`):
 * the first page loads on mount, `loadMore` appends the next. A change of `key` (what names the
 * query: wallet, filter, order, page size) starts over from the first page.
 */
export function useInfiniteBets<TResult, TVariables extends { after?: string | null }, TNode>(
  client: GraphQLClient,
  query: PagedQuery<TResult, TVariables, TNode>,
): PagerState<TNode> & { loadMore: () => Promise<void> } {
  const key = JSON.stringify([query.document.toString(), query.variables]);
  const [pager, setPager] = useState<ReturnType<typeof createPager<TResult, TVariables, TNode>> | undefined>(undefined);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names the query; a new object with the same content restarts nothing
  useEffect(() => {
    const opened = createPager(client, query);
    setPager(opened);
    void opened.loadMore();
    return () => setPager(undefined);
  }, [key]);
  const subscribe = useCallback((listener: () => void) => (pager ? pager.subscribe(listener) : noSubscription()), [pager]);
  const snapshot = useCallback((): PagerState<TNode> => (pager ? pager.getSnapshot() : INITIAL_PAGER), [pager]);
  const state = useSyncExternalStore(subscribe, snapshot, () => INITIAL_PAGER as PagerState<TNode>);
  const loadMore = useCallback(() => pager?.loadMore() ?? Promise.resolve(), [pager]);
  return { ...state, loadMore };
}
