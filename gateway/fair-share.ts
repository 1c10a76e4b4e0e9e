import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, type Registry } from "prom-client";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";
import type { RateLimitStore } from "../core/token-bucket.ts";
import type { PointsBudgetSettings } from "./points-budget.ts";

// A node-wide fair share of what this gateway process executes (docs/reference/limits.md#fair-share).
// Per-address limits cannot shorten the queue a crowd of addresses builds, each within its own
// budget: the process then runs everyone's operations interleaved, and every answer waits for all
// of them. So at most `concurrency` GraphQL operations run at once (from the end of the response
// cache's shortcut to the answer written); a request beyond that waits in one queue, and whenever
// a slot frees, the waiting request whose client has spent the fewest points recently goes next
// (ties: the earliest). A client that spent little is admitted before one that spent much, however
// many addresses the latter is spread over. "Recently" is a decaying sum of the points the budget
// charged the address (door fees, operations, settlements, CSV pages), over the time the budget
// takes to refill. A request still waiting after `queueTimeoutMs` is refused SERVICE_BUSY with
// Retry-After (and the RateLimit-* headers the points budget already set on its answer), HTTP 429
// and not 503: a proxy counts a 503 as its upstream failing (deploy/nginx.conf retries it on the
// other gateway and, after max_fails, takes this one out of rotation for everyone: in bench/abuse.ts
// the shed load turned into 502s for every client), while shedding is about who asks, not the server.

/** Requests waiting in all; beyond, refused at once (the queue's memory stays bounded). */
export const FAIR_SHARE_MAX_WAITING = 1_024;

export interface FairShareSettings {
  /** GraphQL operations this process runs at once before new ones wait (FAIR_SHARE_CONCURRENCY). */
  concurrency: number;
  /** How long a request may wait for its turn before it is refused (FAIR_SHARE_QUEUE_TIMEOUT_MS). */
  queueTimeoutMs: number;
  trustProxyHops: number;
}

/** Points each client spent recently: a sum that decays with time constant `windowMs`. */
export interface SpendMeter {
  /** Counts `points` spent by `client` now (a refund is negative; the sum never goes below 0). */
  add(client: string, points: number): void;
  /** What `client` spent recently, as of now. */
  recent(client: string): number;
}

export function createSpendMeter(options: { windowMs: number; now?: () => number; maxClients?: number }): SpendMeter {
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 100_000;
  const spent = new Map<string, { points: number; at: number }>();
  const decayed = (entry: { points: number; at: number } | undefined, at: number) =>
    entry ? entry.points * Math.exp(-Math.max(0, at - entry.at) / options.windowMs) : 0;
  return {
    add(client, points) {
      const at = now();
      const value = Math.max(0, decayed(spent.get(client), at) + points);
      spent.delete(client); // re-inserted: Map order is then least recently charged first
      spent.set(client, { points: value, at });
      if (spent.size > maxClients) spent.delete(spent.keys().next().value!);
    },
    recent: (client) => decayed(spent.get(client), now()),
  };
}

/** The budget's store, with every charge it allows also counted in `meter` (takes, and settlements both ways). */
export function meteredStore(store: RateLimitStore, meter: SpendMeter): RateLimitStore {
  return {
    async take(key, now, cost = 1) {
      const decision = await store.take(key, now, cost);
      if (decision.allowed && cost !== 0) meter.add(key, cost);
      return decision;
    },
    async settle(key, now, delta) {
      const decision = await store.settle(key, now, delta);
      meter.add(key, delta);
      return decision;
    },
  };
}

/** A request refused by the fair share: the queue was full, or its deadline passed. */
export class FairShareRefusal extends Error {
  constructor(
    readonly reason: string,
    readonly retryAfterSeconds: number,
  ) {
    super(`The gateway is busy (${reason}): clients that spent fewer points recently go first; retry after ${retryAfterSeconds} s`);
  }
}

interface Waiting {
  client: string;
  /** Arrival order: the tie-break between equal spends. */
  arrival: number;
  start(): void;
  timer: NodeJS.Timeout;
}

/** The queue itself, without HTTP: `enter` resolves once the client's turn came, with the release to call once. */
export class FairQueue {
  private running = 0;
  private refused = 0;
  private arrivals = 0;
  private readonly waiting: Waiting[] = [];
  readonly retryAfterSeconds: number;

  constructor(
    private readonly settings: Pick<FairShareSettings, "concurrency" | "queueTimeoutMs">,
    private readonly spend: Pick<SpendMeter, "recent">,
  ) {
    if (settings.concurrency < 1) throw new RangeError("FairQueue: concurrency must be at least 1");
    this.retryAfterSeconds = Math.max(1, Math.ceil(settings.queueTimeoutMs / 1000));
  }

  stats(): { running: number; waiting: number; refused: number } {
    return { running: this.running, waiting: this.waiting.length, refused: this.refused };
  }

  /**
   * Resolves with a release once `client` may run (at once while a slot is free); rejects with a
   * FairShareRefusal when the queue is full or the deadline passed. `signal` withdraws a request
   * still waiting (its client left): it then rejects with the signal's reason and is not counted refused.
   */
  enter(client: string, signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.settings.concurrency && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve(this.releaseOnce());
    }
    if (this.waiting.length >= FAIR_SHARE_MAX_WAITING) {
      this.refused++;
      return Promise.reject(new FairShareRefusal(`${FAIR_SHARE_MAX_WAITING} requests are waiting`, this.retryAfterSeconds));
    }
    return new Promise((resolve, reject) => {
      const withdraw = () => {
        if (!this.remove(entry)) return;
        clearTimeout(entry.timer);
        reject(signal?.reason ?? new Error("withdrawn"));
      };
      const entry: Waiting = {
        client,
        arrival: this.arrivals++,
        start: () => {
          clearTimeout(entry.timer);
          signal?.removeEventListener("abort", withdraw);
          resolve(this.releaseOnce());
        },
        timer: setTimeout(() => {
          if (!this.remove(entry)) return;
          signal?.removeEventListener("abort", withdraw);
          this.refused++;
          reject(new FairShareRefusal(`no turn within ${this.settings.queueTimeoutMs} ms`, this.retryAfterSeconds));
        }, this.settings.queueTimeoutMs),
      };
      this.waiting.push(entry);
      signal?.addEventListener("abort", withdraw, { once: true });
    });
  }

  private remove(entry: Waiting): boolean {
    const at = this.waiting.indexOf(entry);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    return true;
  }

  private releaseOnce(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.next();
    };
  }

  /** Starts waiting requests while slots are free, the least recent spender first (spends read now, not when they queued). */
  private next(): void {
    if (this.running >= this.settings.concurrency || this.waiting.length === 0) return;
    const spent = new Map<string, number>();
    for (const { client } of this.waiting) if (!spent.has(client)) spent.set(client, this.spend.recent(client));
    const order = (a: Waiting, b: Waiting) => spent.get(a.client)! - spent.get(b.client)! || a.arrival - b.arrival;
    while (this.running < this.settings.concurrency && this.waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) if (order(this.waiting[i]!, this.waiting[best]!) < 0) best = i;
      const [entry] = this.waiting.splice(best, 1);
      // Counted as running before its caller resumes: no other request takes the slot meanwhile.
      this.running++;
      entry!.start();
    }
  }
}

export interface FairShare {
  /** The budget's settings with its store counting each client's spend for the queue's order; undefined without a budget. */
  budget: PointsBudgetSettings | undefined;
  /**
   * core/http.ts's `awaitTurn`: resolves with the release to call once the answer is written, or
   * undefined when it answered (429 SERVICE_BUSY) or the client left while waiting.
   */
  awaitTurn(req: IncomingMessage, res: ServerResponse): Promise<(() => void) | undefined>;
  stats(): { running: number; waiting: number; refused: number };
}

/**
 * The fair share of this process. `budget`: the points budget whose charges order the queue (the
 * gateway charges through the returned `budget`); without one every client's spend reads 0 and
 * the queue is first come, first served.
 */
export function createFairShare(settings: FairShareSettings, options: { budget?: PointsBudgetSettings; registry: Registry }): FairShare {
  const { budget, registry } = options;
  // Over the time an emptied budget takes to refill: what the budget itself still remembers.
  const spend = createSpendMeter({ windowMs: budget ? (budget.policy.capacity / budget.policy.refillPerSecond) * 1000 : 10_000 });
  const queue = new FairQueue(settings, spend);
  new Gauge({
    name: "gateway_fair_share_running",
    help: "GraphQL operations this gateway process runs now under its fair share (at most FAIR_SHARE_CONCURRENCY)",
    registers: [registry],
    collect() {
      this.set(queue.stats().running);
    },
  });
  new Gauge({
    name: "gateway_fair_share_waiting",
    help: "GraphQL requests waiting for their turn in the fair share's queue",
    registers: [registry],
    collect() {
      this.set(queue.stats().waiting);
    },
  });
  const refusals = new Counter({
    name: "gateway_fair_share_refused_total",
    help: "GraphQL requests the fair share refused SERVICE_BUSY (queue full, or no turn within FAIR_SHARE_QUEUE_TIMEOUT_MS)",
    registers: [registry],
  });
  return {
    budget: budget && { ...budget, store: meteredStore(budget.store, spend) },
    async awaitTurn(req, res) {
      if (res.closed) return undefined;
      const left = new AbortController();
      const onClose = () => left.abort();
      res.once("close", onClose);
      try {
        return await queue.enter(clientAddress(req, settings.trustProxyHops), left.signal);
      } catch (error) {
        if (!(error instanceof FairShareRefusal)) return undefined; // its client left while it waited
        refusals.inc();
        if (!res.closed) {
          sendJson(
            res,
            429,
            { errors: [{ message: error.message, extensions: { code: ErrorCode.ServiceBusy, retryAfterSeconds: error.retryAfterSeconds } }] },
            { "retry-after": String(error.retryAfterSeconds) },
          );
        }
        return undefined;
      } finally {
        res.off("close", onClose);
      }
    },
    stats: () => queue.stats(),
  };
}
