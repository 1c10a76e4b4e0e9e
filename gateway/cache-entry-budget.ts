// How fast one client may add entries to the response cache. Every distinct request that misses
// would otherwise become an entry: a client cycling through bet ids, or through any input the
// cache key cannot fold away, fills the cache and evicts everyone else's answers. Past its budget
// a client's answers are still served, only not stored. Counted per gateway process, per client
// address (the rate limit's: trusted proxies' X-Forwarded-For), in fixed one-minute windows.

export interface NewEntryBudget {
  /** Whether `client` may add one more entry now (and counts it when it may). */
  take(client: string): boolean;
}

export interface NewEntryBudgetOptions {
  /** New entries one client may add per minute. */
  perMinute: number;
  /**
   * Clients counted per window: past it, a client not counted yet adds nothing until the next
   * window (memory stays bounded under a crowd of addresses; their answers are still served).
   */
  maxClients?: number;
  now?: () => number;
}

const WINDOW_MS = 60_000;

export function createNewEntryBudget(options: NewEntryBudgetOptions): NewEntryBudget {
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 100_000;
  let window = -1;
  const taken = new Map<string, number>();
  return {
    take(client) {
      const current = Math.floor(now() / WINDOW_MS);
      if (current !== window) {
        window = current;
        taken.clear();
      }
      const count = taken.get(client);
      if (count === undefined && taken.size >= maxClients) return false;
      if ((count ?? 0) >= options.perMinute) return false;
      taken.set(client, (count ?? 0) + 1);
      return true;
    },
  };
}
