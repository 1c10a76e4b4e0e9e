// A gateway process's GraphQL seats, shared fairly (docs/reference/limits.md#fair-share). Turns
// (gateway/in-flight.ts) bound what one address runs at once, but not what many do: when every
// attacker of a crowd and fifty fresh addresses start at once, a hundred requests run on one event
// loop and an honest request waits behind all of them. So at most `maxRunning` GraphQL requests run
// at once in the process; past that they wait, and whenever a seat frees, the waiting request of the
// client that has used the fewest seats lately runs next (oldest first within a client). "Lately"
// decays by half every `halfLifeMs`, so a client's rank follows its recent rate, and a client this
// process has not seen starts as if it had just used `newcomerUses` seats: clients it has served
// lately go before addresses it has just met, and a newcomer that stays light overtakes within
// seconds. A light client (fewer than `lightUses` lately: a few requests a second) never waits at
// all: it takes a seat beyond the bound, so whatever holds the seats (slow statements, many
// addresses each within its budget) can delay only heavy clients and newcomers. Its request still
// counts as running, so the heavy ones wait while the light ones keep the process busy. An idle
// process never queues anyone. Memory: one entry per client seen, at most `maxClients`.

export interface FairShareSettings {
  /** GraphQL requests running at once in the process (RATE_LIMIT_RUNNING_PER_GATEWAY). */
  maxRunning: number;
  /** How fast a client's use is forgotten: it halves every this many ms (default FAIR_SHARE_HALF_LIFE_MS). */
  halfLifeMs?: number;
  /** The use a client not seen lately starts with (default FAIR_SHARE_NEWCOMER_USES). */
  newcomerUses?: number;
  /** Below this many uses lately a client never waits for a seat (default FAIR_SHARE_LIGHT_USES). */
  lightUses?: number;
  /** Clients remembered (default FAIR_SHARE_MAX_CLIENTS); past it the least recently seated are forgotten, and start as newcomers again. */
  maxClients?: number;
  now?: () => number;
}

export const FAIR_SHARE_HALF_LIFE_MS = 2_000;
/** A newcomer ranks as a client of ~10 requests a second (the honest clients of the docs send a few) until it proves lighter: ~3 s. */
export const FAIR_SHARE_NEWCOMER_USES = 32;
export const FAIR_SHARE_MAX_CLIENTS = 100_000;
/** ~5 requests a second sustained, at a half-life of 2 s (uses ≈ rate × 2.9): a wallet page's client, not a crawler's. */
export const FAIR_SHARE_LIGHT_USES = 16;

/** A request's place: `ready` is undefined when it runs at once, else resolves when it does; `leave` gives the seat back or leaves the queue (once; later calls do nothing). */
export interface Seat {
  ready: Promise<void> | undefined;
  leave(): void;
}

export interface FairShare {
  seat(client: string): Seat;
  running(): number;
  waiting(): number;
}

/** A client's recent use: `uses` as of `at`, halving every half-life since. */
interface Use {
  uses: number;
  at: number;
}

interface Waiting {
  client: string;
  order: number;
  start: () => void;
}

export function createFairShare(settings: FairShareSettings): FairShare {
  const halfLife = settings.halfLifeMs ?? FAIR_SHARE_HALF_LIFE_MS;
  const newcomerUses = settings.newcomerUses ?? FAIR_SHARE_NEWCOMER_USES;
  const maxClients = settings.maxClients ?? FAIR_SHARE_MAX_CLIENTS;
  const lightUses = settings.lightUses ?? FAIR_SHARE_LIGHT_USES;
  const now = settings.now ?? (() => performance.now());
  const uses = new Map<string, Use>();
  const queue: Waiting[] = [];
  let running = 0;
  let arrivals = 0;

  const usesNow = (client: string, t: number): number => {
    const use = uses.get(client);
    return use ? use.uses * 2 ** (-(t - use.at) / halfLife) : newcomerUses;
  };
  const seated = (client: string) => {
    const t = now();
    const next = { uses: usesNow(client, t) + 1, at: t };
    // Re-inserted, so the map's order is least recently seated first: the first to forget.
    uses.delete(client);
    uses.set(client, next);
    if (uses.size > maxClients) uses.delete(uses.keys().next().value as string);
    running++;
  };
  /** The waiting request of the least-used client (its oldest), or -1. */
  const nextIndex = (): number => {
    const t = now();
    let best = -1;
    let bestUses = Number.POSITIVE_INFINITY;
    for (let i = 0; i < queue.length; i++) {
      const waiting = queue[i]!;
      const u = usesNow(waiting.client, t);
      if (u < bestUses || (u === bestUses && waiting.order < queue[best]!.order)) [best, bestUses] = [i, u];
    }
    return best;
  };
  const free = () => {
    running--;
    const at = nextIndex();
    if (at < 0) return;
    const [next] = queue.splice(at, 1);
    seated(next!.client);
    next!.start();
  };

  return {
    seat(client) {
      let state: "running" | "waiting" | "left" = "running";
      const leave = () => {
        if (state === "running") free();
        else if (state === "waiting") queue.splice(queue.indexOf(waiting), 1);
        state = "left";
      };
      const waiting: Waiting = { client, order: arrivals++, start: () => {} };
      if ((running < settings.maxRunning && queue.length === 0) || usesNow(client, now()) < lightUses) {
        seated(client);
        return { ready: undefined, leave };
      }
      state = "waiting";
      const ready = new Promise<void>((resolve) => {
        waiting.start = () => {
          state = "running";
          resolve();
        };
      });
      queue.push(waiting);
      return { ready, leave };
    },
    running: () => running,
    waiting: () => queue.length,
  };
}
