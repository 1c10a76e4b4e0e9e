// Outbox pruning while a publisher is active: every interval, in batches, the rows no resume can be
// served from any more (core/outbox.ts `prune`, the complement of the replay window). Rows the
// publisher has not published yet are kept.
import type { Logger } from "../core/logger.ts";
import type { Outbox, Retention } from "../core/outbox.ts";

export interface PruneSettings {
  intervalMs: number;
  /** Rows per DELETE; a sweep repeats full batches until the prunable rows are gone. */
  batchSize: number;
  retention: Retention;
}

export interface PrunerDeps {
  outbox: Pick<Outbox, "prune" | "oldest">;
  logger: Logger;
  settings: PruneSettings;
  /** The newest seq published: rows above it stay whatever their age. */
  published: () => bigint;
}

/** Prunes every `intervalMs`, the first time at once, between `start()` and `stop()`; may be started again. */
export class OutboxPruner {
  private rows = 0;
  private stopped = true;
  private running: Promise<void> | undefined;
  private interrupt: (() => void) | undefined;

  private readonly deps: PrunerDeps;
  constructor(deps: PrunerDeps) {
    this.deps = deps;
  }

  /** Rows this pruner has deleted, over every run. */
  pruned(): number {
    return this.rows;
  }

  start(): void {
    if (this.running) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Resolves once the sweep in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.interrupt?.();
    await this.running;
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await this.sweep().catch((error: unknown) => this.deps.logger.warn({ err: error }, "pruning the outbox failed"));
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.deps.settings.intervalMs);
        this.interrupt = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.interrupt = undefined;
    }
  }

  private async sweep(): Promise<void> {
    const { outbox, settings } = this.deps;
    let rows = 0;
    for (;;) {
      const batch = await outbox.prune(settings.retention, { batchSize: settings.batchSize, keepAbove: this.deps.published() });
      rows += batch;
      this.rows += batch;
      if (batch < settings.batchSize || this.stopped) break;
    }
    if (rows > 0) this.deps.logger.info({ rows, oldestSeq: (await outbox.oldest())?.toString() }, "pruned the outbox");
  }
}
