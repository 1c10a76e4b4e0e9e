import { afterEach, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../../core/errors.ts";
import { ExpensiveLane, MAX_WAITING_PER_CLIENT, ServiceBusyError } from "./expensive-lane.ts";

// The lane's rules on a fake clock: at most `concurrency` running, FIFO among those that may run,
// a client's own cap, and SERVICE_BUSY with a retry hint past the queue's deadline.

/** A statement the test finishes by hand. */
function gate() {
  let open: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open: () => open() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("ExpensiveLane", () => {
  it("runs at most `concurrency` at once, the rest in arrival order", async () => {
    const lane = new ExpensiveLane({ concurrency: 2, perClient: 2, queueTimeoutMs: 60_000 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const runs = ["a", "b", "c", "d"].map((name, i) => {
      const g = gate();
      gates.set(name, g);
      return lane.run(`client${i}`, async () => {
        started.push(name);
        await g.done;
        return name;
      });
    });
    await settle();
    expect(started).toEqual(["a", "b"]);
    expect(lane.stats()).toMatchObject({ running: 2, waiting: 2 });
    gates.get("b")!.open();
    await settle();
    expect(started).toEqual(["a", "b", "c"]);
    expect(lane.stats()).toMatchObject({ running: 2, waiting: 1 });
    for (const g of gates.values()) g.open();
    expect(await Promise.all(runs)).toEqual(["a", "b", "c", "d"]);
    expect(lane.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 });
  });

  it("lets other clients pass a client at its own cap", async () => {
    const lane = new ExpensiveLane({ concurrency: 2, perClient: 1, queueTimeoutMs: 60_000 });
    const started: string[] = [];
    const hold = gate();
    const work = (name: string) => async () => {
      started.push(name);
      await hold.done;
    };
    const runs = [lane.run("crowd", work("crowd1")), lane.run("crowd", work("crowd2")), lane.run("honest", work("honest"))];
    await settle();
    expect(started).toEqual(["crowd1", "honest"]);
    hold.open();
    await Promise.all(runs);
    expect(started).toEqual(["crowd1", "honest", "crowd2"]);
  });

  it("refuses a statement still waiting at the deadline with SERVICE_BUSY and a retry hint", async () => {
    vi.useFakeTimers();
    const lane = new ExpensiveLane({ concurrency: 1, perClient: 1, queueTimeoutMs: 2_000 });
    const hold = gate();
    const running = lane.run("a", () => hold.done);
    const waiting = lane.run("b", async () => "ran").catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(lane.stats()).toMatchObject({ running: 1, waiting: 1 });
    await vi.advanceTimersByTimeAsync(1);
    const refusal = await waiting;
    expect(refusal).toBeInstanceOf(ServiceBusyError);
    expect((refusal as ServiceBusyError).extensions).toEqual({ code: ErrorCode.ServiceBusy, retryAfterSeconds: 2 });
    expect(lane.stats()).toMatchObject({ running: 1, waiting: 0, refused: 1 });
    hold.open();
    await running;
    expect(lane.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("refuses at once what one client queues beyond its share", async () => {
    const lane = new ExpensiveLane({ concurrency: 1, perClient: 1, queueTimeoutMs: 60_000 });
    const hold = gate();
    const runs = Array.from({ length: MAX_WAITING_PER_CLIENT + 2 }, () =>
      lane
        .run("crowd", () => hold.done)
        .then(
          () => "ran",
          (error: unknown) => error,
        ),
    );
    await settle();
    expect(lane.stats()).toMatchObject({ running: 1, waiting: MAX_WAITING_PER_CLIENT, refused: 1 });
    hold.open();
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => o === "ran")).toHaveLength(MAX_WAITING_PER_CLIENT + 1);
    expect(outcomes.filter((o) => o instanceof ServiceBusyError)).toHaveLength(1);
  });

  it("frees the slot of a statement that fails", async () => {
    const lane = new ExpensiveLane({ concurrency: 1, perClient: 1, queueTimeoutMs: 60_000 });
    await expect(lane.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await lane.run("a", async () => 1)).toBe(1);
    expect(lane.stats()).toMatchObject({ running: 0, waiting: 0 });
  });
});
