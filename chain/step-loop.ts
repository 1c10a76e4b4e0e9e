// The simulator's schedule of rounds (chain/simulator.ts): one round at a time, never overlapping,
// asked for (step) or every `intervalMs` between start() and stop().
import type { Logger } from "../core/logger.ts";

/** Steps one at a time (never overlapping), and every `intervalMs` between start() and stop(). */
export class StepLoop<Report> {
  private queue: Promise<unknown> = Promise.resolve();
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  private readonly runStep: () => Promise<Report>;
  private readonly intervalMs: number;
  private readonly afterStep: (report: Report) => void;
  private readonly log: Logger;
  constructor(runStep: () => Promise<Report>, intervalMs: number, afterStep: (report: Report) => void, log: Logger) {
    this.runStep = runStep;
    this.intervalMs = intervalMs;
    this.afterStep = afterStep;
    this.log = log;
  }

  step(): Promise<Report> {
    const next = this.queue.then(this.runStep, this.runStep);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          this.afterStep(await this.step());
        } catch (error) {
          this.log.error({ event: "step_failed", error: String(error).slice(0, 500) });
        }
        if (this.running) {
          await new Promise<void>((r) => {
            const timer = setTimeout(r, this.intervalMs);
            this.wake = () => {
              clearTimeout(timer);
              r();
            };
          });
          this.wake = undefined;
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.queue;
  }
}
