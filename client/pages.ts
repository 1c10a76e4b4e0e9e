// Keyset pages of `playerBets` and `bets`, walked for the caller: `pageThrough` yields page after
// page (plain), `createPager` keeps the pages loaded so far and loads the next one on `loadMore`
// (what the React hook `useInfiniteBets` shows). Each page is asked with the previous page's
// `endCursor` and the same filter and order (the API refuses a cursor under another filter), so
// the walk has no gap and no duplicate. Retries are the GraphQL client's (client/graphql.ts).
import type { GraphQLClient, TypedDocument } from "./graphql.ts";
import { betsPageQuery, playerBetsPageQuery } from "./operations.ts";

/** The connection shape both paged queries return. */
interface Connection<TNode> {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
  nodes: TNode[];
}

/** A paged query: its document, its variables without `after`, and where its connection is in the answer. */
export interface PagedQuery<TResult, TVariables extends { after?: string | null }, TNode> {
  document: TypedDocument<TResult, TVariables>;
  variables: Omit<TVariables, "after">;
  connectionOf(result: TResult): Connection<TNode>;
}

type PlayerBetsPage = typeof playerBetsPageQuery extends TypedDocument<infer R, infer V> ? { result: R; variables: V } : never;
type BetsPage = typeof betsPageQuery extends TypedDocument<infer R, infer V> ? { result: R; variables: V } : never;
export type PagedBet = PlayerBetsPage["result"]["playerBets"]["nodes"][number];

/** A wallet's history (filters, order, page size, minBlock as `playerBets` takes them). */
export function playerBetsPages(
  variables: Omit<PlayerBetsPage["variables"], "after">,
): PagedQuery<PlayerBetsPage["result"], PlayerBetsPage["variables"], PagedBet> {
  return { document: playerBetsPageQuery, variables, connectionOf: (result) => result.playerBets };
}

/** Every wallet's bets, the explorer (filters, order, page size, minBlock as `bets` takes them). */
export function betsPages(variables: Omit<BetsPage["variables"], "after">): PagedQuery<BetsPage["result"], BetsPage["variables"], PagedBet> {
  return { document: betsPageQuery, variables, connectionOf: (result) => result.bets };
}

/** Every page of `query`, in order, until the last (or until the caller stops iterating). */
export async function* pageThrough<TResult, TVariables extends { after?: string | null }, TNode>(
  client: GraphQLClient,
  query: PagedQuery<TResult, TVariables, TNode>,
): AsyncGenerator<Connection<TNode>> {
  let after: string | null | undefined;
  for (;;) {
    const variables = { ...query.variables, after } as TVariables;
    const page = query.connectionOf(await client.request(query.document, ...([variables] as never as [TVariables])));
    yield page;
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
    after = page.pageInfo.endCursor;
  }
}

export interface PagerState<TNode> {
  /** Every node loaded so far, in page order. */
  items: TNode[];
  /** The total the last page reported (the filter's count). */
  totalCount: number | undefined;
  hasMore: boolean;
  loading: boolean;
  error: Error | undefined;
}

export interface Pager<TNode> {
  getSnapshot(): PagerState<TNode>;
  subscribe(listener: () => void): () => void;
  /** Loads the next page (the first on the first call); a call while one loads waits for it. */
  loadMore(): Promise<void>;
}

/** Pages kept and extended on demand (`loadMore`), for an infinite list. */
export function createPager<TResult, TVariables extends { after?: string | null }, TNode>(
  client: GraphQLClient,
  query: PagedQuery<TResult, TVariables, TNode>,
): Pager<TNode> {
  const pages = pageThrough(client, query);
  const listeners = new Set<() => void>();
  let state: PagerState<TNode> = { items: [], totalCount: undefined, hasMore: true, loading: false, error: undefined };
  let pending: Promise<void> | undefined;
  const set = (next: Partial<PagerState<TNode>>) => {
    state = { ...state, ...next };
    for (const listener of listeners) listener();
  };
  return {
    getSnapshot: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    loadMore() {
      if (!state.hasMore) return Promise.resolve();
      pending ??= (async () => {
        set({ loading: true, error: undefined });
        try {
          const next = await pages.next();
          if (next.done) set({ hasMore: false, loading: false });
          else
            set({ items: [...state.items, ...next.value.nodes], totalCount: next.value.totalCount, hasMore: next.value.pageInfo.hasNextPage, loading: false });
        } catch (error) {
          // The generator is finished by a throw: a later loadMore cannot resume it.
          set({ error: error instanceof Error ? error : new Error(String(error)), loading: false, hasMore: false });
        } finally {
          pending = undefined;
        }
      })();
      return pending;
    },
  };
}
