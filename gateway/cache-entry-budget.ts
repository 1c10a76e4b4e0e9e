// How fast one client may add work that outlives its request: entries to the response cache
// (every distinct request that misses would otherwise become an entry: a client cycling through bet
// ids, or through any input the cache key cannot fold away, fills the cache and evicts everyone
// else's answers; past its budget a client's answers are still served, only not stored), and the
// tokens of documents the gateway has not seen (gateway/validation-work.ts: past its budget a new
// document is priced in points). Counted per client address (the rate limit's: trusted proxies'
// X-Forwarded-For), in fixed one-minute windows: across gateways in the rate limit's Redis when
// there is one (createSharedNewEntryBudget), else per gateway process.
import type { GuardedRedis } from "../core/redis.ts";

export interface NewEntryBudget {
  /** Whether `client` may add `amount` more (default 1) now: counted when it may, and when it may not the window stays spent. */
  take(client: string, amount?: number): boolean | Promise<boolean>;
}

export interface NewEntryBudgetOptions {
  /** What one client may add per minute (entries, tokens). */
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
    take(client, amount = 1) {
      const current = Math.floor(now() / WINDOW_MS);
      if (current !== window) {
        window = current;
        taken.clear();
      }
      const count = taken.get(client);
      if (count === undefined && taken.size >= maxClients) return false;
      if ((count ?? 0) + amount > options.perMinute) {
        taken.set(client, options.perMinute);
        return false;
      }
      taken.set(client, (count ?? 0) + amount);
      return true;
    },
  };
}

export interface SharedNewEntryBudgetOptions {
  /**
   * The rate limit's Redis (REDIS_URL), never the cache's own: its keys are not evicted, so filling
   * the cache cannot reset a client's count.
   */
  redis: GuardedRedis;
  /** Counts while Redis is away (each gateway on its own then, as the rate limit). */
  local: NewEntryBudget;
  perMinute: number;
  /** Key prefix; default `cache-entries:`. */
  prefix?: string;
  now?: () => number;
}

/** One count per client and window, expiring with the window after next. */
const COUNT_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** The budget across every gateway sharing `redis`: one count per client and minute there. */
export function createSharedNewEntryBudget(options: SharedNewEntryBudgetOptions): NewEntryBudget {
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? "cache-entries:";
  return {
    async take(client, amount = 1) {
      const window = Math.floor(now() / WINDOW_MS);
      try {
        const count = await options.redis.run((redis) => redis.eval(COUNT_SCRIPT, 1, `${prefix}${window}:${client}`, 2 * WINDOW_MS, amount));
        return Number(count) <= options.perMinute;
      } catch {
        return options.local.take(client, amount);
      }
    },
  };
}

/** A budget of `perMinute` per client: across gateways in `redis` when given (this process's own count while it is away), else this process's. */
export function createClientBudget(options: { perMinute: number; redis?: GuardedRedis; prefix?: string; now?: () => number }): NewEntryBudget {
  const { perMinute, redis, prefix, now } = options;
  const local = createNewEntryBudget({ perMinute, now });
  return redis ? createSharedNewEntryBudget({ redis, local, perMinute, prefix, now }) : local;
}
