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
// process never queues anyone. Memory: one entry per client seen, at most `maxClients`. Cost: a
// freed seat is found in O(log n) of the clients waiting (two heaps), not by reading them all.

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

/** One client's waiting requests, oldest first. */
interface Line {
  client: string;
  requests: Waiting[];
  /** Its current place in a heap (older entries of the line are outdated, dropped when met). */
  entry?: Entry;
}

/**
 * A known client's line in the heap. Every known client's use halves at the same rate, so their
 * order never changes while they wait: `key` = log2(uses) + at / halfLife ranks them as their use
 * now does (use now = 2^(key - now / halfLife)), and changes only when the client is seated.
 */
interface Entry {
  key: number;
  order: number;
  line: Line;
}

const before = (a: Entry, b: Entry) => a.key < b.key || (a.key === b.key && a.order < b.order);

function push(heap: Entry[], entry: Entry): void {
  let i = heap.push(entry) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i]!, heap[parent]!)) return;
    [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
    i = parent;
  }
}

function pop(heap: Entry[]): void {
  const last = heap.pop()!;
  if (heap.length === 0) return;
  heap[0] = last;
  for (let i = 0; ; ) {
    const [l, r] = [2 * i + 1, 2 * i + 2];
    let least = i;
    if (l < heap.length && before(heap[l]!, heap[least]!)) least = l;
    if (r < heap.length && before(heap[r]!, heap[least]!)) least = r;
    if (least === i) return;
    [heap[i], heap[least]] = [heap[least]!, heap[i]!];
    i = least;
  }
}

export function createFairShare(settings: FairShareSettings): FairShare {
  const halfLife = settings.halfLifeMs ?? FAIR_SHARE_HALF_LIFE_MS;
  const newcomerUses = settings.newcomerUses ?? FAIR_SHARE_NEWCOMER_USES;
  const maxClients = settings.maxClients ?? FAIR_SHARE_MAX_CLIENTS;
  const lightUses = settings.lightUses ?? FAIR_SHARE_LIGHT_USES;
  const now = settings.now ?? (() => performance.now());
  const uses = new Map<string, Use>();
  /** Waiting requests by client; a freed seat is found in O(log n), never by reading every waiting request (n grows with the addresses an attacker has: IPv6 /64s are cheap). */
  const lines = new Map<string, Line>();
  /**
   * Known clients' lines, least used first, and newcomers' (all ranking as `newcomerUses`), oldest
   * first. A line has one current entry, pushed when it is placed, its oldest request leaves or its
   * client is forgotten; entries outdated by that, or by its emptying, are dropped when met.
   */
  const known: Entry[] = [];
  const fresh: Entry[] = [];
  let waitingCount = 0;
  let running = 0;
  let arrivals = 0;

  const usesAt = (client: string, t: number): number => {
    const use = uses.get(client);
    return use ? use.uses * 2 ** (-(t - use.at) / halfLife) : newcomerUses;
  };
  const seated = (client: string) => {
    const t = now();
    const next = { uses: usesAt(client, t) + 1, at: t };
    // Re-inserted, so the map's order is least recently seated first: the first to forget.
    uses.delete(client);
    uses.set(client, next);
    // Its waiting requests, if any, now rank at its new use (it may have been seated at once as a light client).
    const line = lines.get(client);
    if (line) place(line);
    if (uses.size > maxClients) {
      const forgotten = uses.keys().next().value as string;
      uses.delete(forgotten);
      // Its waiting requests now rank as a newcomer's.
      const forgottenLine = lines.get(forgotten);
      if (forgottenLine) place(forgottenLine);
    }
    running++;
  };
  const keyOf = (client: string): number | undefined => {
    const use = uses.get(client);
    return use && Math.log2(use.uses) + use.at / halfLife;
  };
  const current = (entry: Entry) => entry.line.entry === entry && lines.get(entry.line.client) === entry.line;
  /** A line with requests goes where its client ranks: the known heap, else the newcomers'. */
  const place = (line: Line) => {
    const key = keyOf(line.client);
    const entry = { key: key ?? 0, order: line.requests[0]!.order, line };
    line.entry = entry;
    push(key === undefined ? fresh : known, entry);
    // Outdated entries wait until met: both heaps are rebuilt when they outnumber the current ones.
    if (known.length + fresh.length > 1_024 + 2 * lines.size)
      for (const heap of [known, fresh]) {
        const kept = heap.filter(current).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)); // sorted: a heap
        heap.length = 0;
        for (const entry of kept) heap.push(entry);
      }
  };
  /** A heap's current top. */
  const top = (heap: Entry[]): Entry | undefined => {
    while (heap.length > 0 && !current(heap[0]!)) pop(heap);
    return heap[0];
  };
  /** Takes the line of the least-used waiting client (its oldest request first) out of its heap, or undefined. */
  const nextLine = (): Line | undefined => {
    const k = top(known);
    const f = top(fresh);
    if (!k && !f) return undefined;
    let heap = k ? known : fresh;
    if (k && f) {
      const knownUses = 2 ** (k.key - now() / halfLife);
      if (knownUses > newcomerUses || (knownUses === newcomerUses && f.order < k.order)) heap = fresh;
    }
    const line = heap[0]!.line;
    pop(heap);
    return line;
  };
  const free = () => {
    running--;
    // Light clients run beyond the bound; the seat one gives back is not a seat while the bound is still reached.
    if (running >= settings.maxRunning) return;
    const line = nextLine();
    if (!line) return;
    const next = line.requests.shift()!;
    waitingCount--;
    if (line.requests.length === 0) lines.delete(line.client);
    seated(next.client); // re-places the rest of its line
    next.start();
  };
  const unqueue = (waiting: Waiting) => {
    const line = lines.get(waiting.client)!;
    const at = line.requests.indexOf(waiting);
    line.requests.splice(at, 1);
    waitingCount--;
    if (line.requests.length === 0) lines.delete(waiting.client);
    else if (at === 0) place(line); // ranked by its new oldest request
  };
  const enqueue = (waiting: Waiting) => {
    waitingCount++;
    const line = lines.get(waiting.client);
    if (line) return void line.requests.push(waiting);
    const started = { client: waiting.client, requests: [waiting] };
    lines.set(waiting.client, started);
    place(started);
  };

  return {
    seat(client) {
      let state: "running" | "waiting" | "left" = "running";
      const leave = () => {
        if (state === "running") free();
        else if (state === "waiting") unqueue(waiting);
        state = "left";
      };
      const waiting: Waiting = { client, order: arrivals++, start: () => {} };
      if ((running < settings.maxRunning && waitingCount === 0) || usesAt(client, now()) < lightUses) {
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
      enqueue(waiting);
      return { ready, leave };
    },
    running: () => running,
    waiting: () => waitingCount,
  };
}
