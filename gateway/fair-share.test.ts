import { describe, expect, it } from "vitest";
import { createFairShare } from "./fair-share.ts";

// The process's seats (gateway/fair-share.ts) on a clock the test moves: who runs when every seat
// is taken is decided by each client's recent use, newcomers ranking as heavy ones.

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** Records the order in which waiting seats start. */
function started(order: string[], name: string, ready: Promise<void> | undefined) {
  expect(ready).toBeDefined();
  void ready!.then(() => order.push(name));
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("fair share", () => {
  it("seats at once while a seat is free, and queues past maxRunning", () => {
    const share = createFairShare({ lightUses: 0, maxRunning: 2 });
    const a = share.seat("a");
    const b = share.seat("b");
    const c = share.seat("c");
    expect([a.ready, b.ready]).toEqual([undefined, undefined]);
    expect(c.ready).toBeInstanceOf(Promise);
    expect([share.running(), share.waiting()]).toEqual([2, 1]);
  });

  it("gives a freed seat to the client used least lately, not to the oldest request", async () => {
    const time = clock();
    const share = createFairShare({ lightUses: 0, maxRunning: 1, now: time.now, halfLifeMs: 2_000, newcomerUses: 32 });
    // The light client: seen before, one request a second for ten seconds.
    for (let i = 0; i < 10; i++) {
      share.seat("light").leave();
      time.advance(1_000);
    }
    // The heavy one: fifty requests in the last second.
    for (let i = 0; i < 50; i++) {
      share.seat("heavy").leave();
      time.advance(20);
    }
    const holder = share.seat("heavy");
    const order: string[] = [];
    const heavy = share.seat("heavy");
    const newcomer = share.seat("newcomer");
    const light = share.seat("light");
    started(order, "heavy", heavy.ready);
    started(order, "newcomer", newcomer.ready);
    started(order, "light", light.ready);
    holder.leave();
    await flush();
    expect(order).toEqual(["light"]);
    // Then the newcomer (32 uses) before the heavy client (~50 in its last second).
    light.leave();
    await flush();
    expect(order).toEqual(["light", "newcomer"]);
    newcomer.leave();
    await flush();
    expect(order).toEqual(["light", "newcomer", "heavy"]);
  });

  it("ranks a newcomer as a heavy client that decays: it overtakes a fresh one once it has stayed light", async () => {
    const time = clock();
    const share = createFairShare({ lightUses: 0, maxRunning: 1, now: time.now, halfLifeMs: 1_000, newcomerUses: 32 });
    share.seat("steady").leave();
    time.advance(10_000); // steady: 33 uses ten half-lives ago, ~0.03 now
    const holder = share.seat("newcomer"); // 33 now
    const order: string[] = [];
    const newcomer = share.seat("newcomer");
    const steady = share.seat("steady");
    started(order, "newcomer", newcomer.ready);
    started(order, "steady", steady.ready);
    holder.leave();
    await flush();
    expect(order).toEqual(["steady"]);
    // Ten half-lives on, the newcomer has stayed light (~0.03): it goes before a fresh address (32).
    time.advance(10_000);
    started(order, "fresh", share.seat("fresh").ready);
    steady.leave();
    await flush();
    expect(order).toEqual(["steady", "newcomer"]);
  });

  it("keeps the order of one client's requests, and a request that leaves the queue never runs", async () => {
    const share = createFairShare({ lightUses: 0, maxRunning: 1 });
    const holder = share.seat("a");
    const order: string[] = [];
    const first = share.seat("b");
    const second = share.seat("b");
    started(order, "b1", first.ready);
    started(order, "b2", second.ready);
    first.leave();
    expect(share.waiting()).toBe(1);
    holder.leave();
    await flush();
    expect(order).toEqual(["b2"]);
    second.leave();
    second.leave(); // once only
    expect([share.running(), share.waiting()]).toEqual([0, 0]);
  });

  it("remembers at most maxClients clients, forgetting the least recently seated", async () => {
    const time = clock();
    const share = createFairShare({ lightUses: 0, maxRunning: 1, now: time.now, maxClients: 2, halfLifeMs: 1_000, newcomerUses: 32 });
    share.seat("old").leave();
    share.seat("b").leave();
    share.seat("c").leave(); // "old" is forgotten: a newcomer again
    time.advance(10_000);
    const holder = share.seat("b");
    const order: string[] = [];
    started(order, "old", share.seat("old").ready);
    started(order, "c", share.seat("c").ready);
    holder.leave();
    await flush();
    expect(order).toEqual(["c"]);
  });

  it("frees a seat without reading every waiting request: 20 000 waiting from 10 000 clients (IPv6 /64s are cheap) cost little more per seat than a few", async () => {
    const time = clock();
    const share = createFairShare({ lightUses: 0, maxRunning: 16, now: time.now, halfLifeMs: 1_000 });
    // Known clients of many weights (seated 1 to 5 times), and newcomers; two requests each (RATE_LIMIT_RUNNING_PER_CLIENT).
    for (let i = 0; i < 5_000; i++) for (let k = 0; k <= i % 5; k++) share.seat(`c${i}`).leave();
    let running = Array.from({ length: 16 }, (_, i) => share.seat(`held${i}`));
    const seated: ReturnType<typeof share.seat>[] = [];
    for (let i = 0; i < 20_000; i++) {
      const seat = share.seat(`c${i >> 1}`);
      void seat.ready!.then(() => seated.push(seat));
    }
    // Before: each freed seat read all those waiting (~1 ms each for 10 000 on the reference host: a few thousand seats a second took the whole event loop).
    let elapsed = 0;
    for (let round = 0; round < 125; round++) {
      const start = performance.now();
      for (const seat of running) seat.leave();
      elapsed += performance.now() - start;
      await flush();
      running = seated.splice(0);
      expect(running).toHaveLength(16);
    }
    expect(share.waiting()).toBe(20_000 - 125 * 16);
    expect(elapsed).toBeLessThan(200);
  });

  it("never keeps a light client waiting: it runs beyond the bound, and counts as running", () => {
    const time = clock();
    const share = createFairShare({ maxRunning: 1, now: time.now, halfLifeMs: 1_000, newcomerUses: 32, lightUses: 16 });
    share.seat("light").leave();
    time.advance(10_000); // ~0.03 uses now: light
    const heavy = share.seat("heavy"); // a newcomer: takes the only seat
    expect(heavy.ready).toBeUndefined();
    expect(share.seat("other newcomer").ready).toBeDefined(); // 32 uses: waits
    const light = share.seat("light");
    expect(light.ready).toBeUndefined();
    expect([share.running(), share.waiting()]).toEqual([2, 1]);
    // Sixteen requests in a moment make it heavy: the next one waits like any other.
    for (let i = 0; i < 15; i++) share.seat("light").leave();
    expect(share.seat("light").ready).toBeDefined();
  });

  it("re-ranks a client's waiting requests when it is seated at once as a light client", async () => {
    const time = clock();
    const share = createFairShare({ maxRunning: 1, now: time.now, halfLifeMs: 2_000, newcomerUses: 32, lightUses: 16 });
    share.seat("a").leave();
    share.seat("b").leave(); // both known, 33 uses at t = 0
    const holder = share.seat("holder");
    const order: string[] = [];
    started(order, "a", share.seat("a").ready); // both wait, a first by age
    started(order, "b", share.seat("b").ready);
    time.advance(4_000); // both decay to ~8 uses: light
    const light = share.seat("a"); // a runs at once, so a has now used more than b
    expect(light.ready).toBeUndefined();
    holder.leave();
    light.leave();
    await flush();
    expect(order).toEqual(["b"]);
  });

  it("does not hand a light client's seat to a waiting request while the bound is still reached", async () => {
    const time = clock();
    const share = createFairShare({ maxRunning: 1, now: time.now, halfLifeMs: 1_000, newcomerUses: 32, lightUses: 16 });
    share.seat("light").leave();
    time.advance(10_000);
    share.seat("heavy"); // takes the only seat
    const order: string[] = [];
    started(order, "waiting", share.seat("newcomer").ready);
    const light = share.seat("light");
    expect(light.ready).toBeUndefined();
    light.leave();
    await flush();
    expect(order).toEqual([]);
    expect([share.running(), share.waiting()]).toEqual([1, 1]);
  });
});
