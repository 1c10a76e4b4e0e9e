import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";
import { createSpendMeter, FAIR_SHARE_MAX_WAITING, FairQueue, FairShareRefusal, meteredStore } from "./fair-share.ts";

// The fair share's queue (gateway/fair-share.ts) without HTTP: who goes next when a slot frees, the
// deadline, a client leaving, and the spend the order is read from.

/** Spends set by the test, read by the queue whenever it chooses. */
const spends = (values: Record<string, number>) => ({ recent: (client: string) => values[client] ?? 0 });

/** Enters `client` and records, in order, when each one started. */
function entering(queue: FairQueue, client: string, started: string[]): Promise<() => void> {
  return queue.enter(client).then((release) => {
    started.push(client);
    return release;
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the fair share's queue", () => {
  it("admits a client that spent little, queued after many that spent much, before them; the rest in arrival order", async () => {
    const queue = new FairQueue({ concurrency: 1, queueTimeoutMs: 60_000 }, spends({ heavy: 5_000, heavier: 9_000, light: 10 }));
    const started: string[] = [];
    const first = await entering(queue, "heavy", started);
    // Each one, once started, records itself and releases its slot at once.
    const waiting = ["heavier", "heavy", "heavier", "heavy", "light"].map((client) => entering(queue, client, started).then((release) => release()));
    expect(queue.stats()).toEqual({ running: 1, waiting: 5, refused: 0 });

    first();
    await Promise.all(waiting);
    expect(started).toEqual(["heavy", "light", "heavy", "heavy", "heavier", "heavier"]);
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, refused: 0 });
  });

  it("reads the spends when a slot frees, not when the requests queued", async () => {
    const values: Record<string, number> = { a: 0, b: 100 };
    const queue = new FairQueue({ concurrency: 1, queueTimeoutMs: 60_000 }, spends(values));
    const started: string[] = [];
    const first = await entering(queue, "a", started);
    const a = entering(queue, "a", started);
    const b = entering(queue, "b", started);
    values.a = 1_000; // `a` spent meanwhile
    first();
    (await b)();
    (await a)();
    expect(started).toEqual(["a", "b", "a"]);
  });

  it("counts a queued request as running as soon as its turn comes: a newcomer waits behind it", async () => {
    const queue = new FairQueue({ concurrency: 2, queueTimeoutMs: 60_000 }, spends({ heavy: 5_000 }));
    const started: string[] = [];
    const running = [await entering(queue, "heavy", started), await entering(queue, "heavy", started)];
    const queued = entering(queue, "heavy", started);
    running[0]!(); // the queued one takes the slot before it resumes
    const newcomer = entering(queue, "light", started);
    expect(queue.stats()).toMatchObject({ running: 2, waiting: 1 });
    (await queued)();
    (await newcomer)();
    running[1]!();
    expect(started).toEqual(["heavy", "heavy", "heavy", "light"]);
  });

  it("refuses a request still waiting at the deadline with a retry hint, and frees nothing it never held", async () => {
    vi.useFakeTimers();
    const queue = new FairQueue({ concurrency: 1, queueTimeoutMs: 2_500 }, spends({}));
    const running = await queue.enter("a");
    const late = queue.enter("b");
    const outcome = late.then(
      () => "admitted",
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(2_499);
    expect(queue.stats()).toEqual({ running: 1, waiting: 1, refused: 0 });
    await vi.advanceTimersByTimeAsync(1);
    const refusal = await outcome;
    expect(refusal).toBeInstanceOf(FairShareRefusal);
    expect(refusal).toMatchObject({ retryAfterSeconds: 3 });
    expect((refusal as FairShareRefusal).message).toMatch(/busy .*no turn within 2500 ms.*retry after 3 s/);
    expect(queue.stats()).toEqual({ running: 1, waiting: 0, refused: 1 });
    running();
    running(); // released once, however often called
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, refused: 1 });
  });

  it("refuses at once beyond the most requests that may wait", async () => {
    const queue = new FairQueue({ concurrency: 1, queueTimeoutMs: 60_000 }, spends({}));
    const running = await queue.enter("a");
    const clients = Array.from({ length: FAIR_SHARE_MAX_WAITING }, () => new AbortController());
    const waiting = clients.map((left) => queue.enter("a", left.signal).catch(() => undefined));
    await expect(queue.enter("b")).rejects.toBeInstanceOf(FairShareRefusal);
    expect(queue.stats()).toEqual({ running: 1, waiting: FAIR_SHARE_MAX_WAITING, refused: 1 });
    for (const left of clients) left.abort(new Error("gone"));
    await Promise.all(waiting);
    running();
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, refused: 1 });
  });

  it("forgets a request whose client left while it waited: not refused, and its turn goes to the next", async () => {
    const queue = new FairQueue({ concurrency: 1, queueTimeoutMs: 60_000 }, spends({ gone: 0, stays: 50 }));
    const started: string[] = [];
    const running = await entering(queue, "a", started);
    const left = new AbortController();
    const gone = queue.enter("gone", left.signal);
    const stays = entering(queue, "stays", started);
    left.abort(new Error("client left"));
    await expect(gone).rejects.toThrow("client left");
    running();
    (await stays)();
    expect(started).toEqual(["a", "stays"]);
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, refused: 0 });
  });
});

describe("the spend the order is read from", () => {
  it("decays with the window's time constant and never goes below 0", () => {
    let now = 0;
    const meter = createSpendMeter({ windowMs: 10_000, now: () => now });
    meter.add("a", 1_000);
    expect(meter.recent("a")).toBe(1_000);
    now = 10_000;
    expect(meter.recent("a")).toBeCloseTo(1_000 / Math.E, 6);
    meter.add("a", -2_000); // a refund larger than what is left
    expect(meter.recent("a")).toBe(0);
    expect(meter.recent("never seen")).toBe(0);
  });

  it("counts what the budget's store allowed and settled, not what it refused", async () => {
    let now = 0;
    const meter = createSpendMeter({ windowMs: 1e12, now: () => now });
    const store = meteredStore(createMemoryRateLimitStore({ capacity: 100, refillPerSecond: 1 }), meter);
    expect((await store.take("a", now, 60)).allowed).toBe(true);
    expect((await store.take("a", now, 60)).allowed).toBe(false);
    await store.take("a", now, 0); // a look at the budget
    await store.settle("a", now, -20);
    await store.settle("a", now, 5);
    now = 1;
    expect(meter.recent("a")).toBeCloseTo(45, 6);
    expect(meter.recent("b")).toBe(0);
  });
});
