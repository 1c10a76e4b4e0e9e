// A bounded lane (a bulkhead) for expensive work: at most `concurrency` pieces of it run at once in
// this process, so that they can hold only that many connections of the pool; every other read
// finds the rest free. Beyond it they wait in one FIFO queue, at most `queueTimeoutMs`, then are
// refused with the owner's error and a retry hint. One client (an address) runs at most `perClient`
// of them at once and waits with at most MAX_WAITING_PER_CLIENT more: a crowd of one address queues
// behind itself, never in front of the others. Tier-neutral: the subgraphs' expensive statements
// (subgraphs/kit/expensive-lane.ts) and the realtime nodes' replay pages (realtime/connection.ts)
// each own one, and each says how a refusal reads to its clients (`refusal`).

/** Pieces of work one client may have waiting beyond those it runs; more are refused at once. */
export const MAX_WAITING_PER_CLIENT = 8;
/** Pieces of work waiting in all; more are refused at once (the queue's memory stays bounded). */
export const MAX_WAITING = 256;

export interface LaneOptions {
  /** Pieces of work running at once in this process: the pool connections they may hold. */
  concurrency: number;
  /** Pieces of work one client runs at once. */
  perClient: number;
  /** How long a piece of work may wait for its turn before it is refused. */
  queueTimeoutMs: number;
}

export interface LaneStats {
  running: number;
  waiting: number;
  /** Refused so far (deadline passed or queue full). */
  refused: number;
}

/** Builds the error a refused piece of work rejects with: why (`reason`), and when to retry. */
export type LaneRefusal = (reason: string, retryAfterSeconds: number) => Error;

interface Share {
  running: number;
  waiting: number;
}

interface Waiting {
  own: Share;
  start(): void;
  refuse(error: Error): void;
  timer: NodeJS.Timeout;
}

export class BoundedLane {
  private running = 0;
  private refused = 0;
  private readonly byClient = new Map<string, Share>();
  private readonly queue: Waiting[] = [];
  private readonly retryAfterSeconds: number;

  private readonly options: LaneOptions;
  private readonly refusal: LaneRefusal;
  constructor(options: LaneOptions, refusal: LaneRefusal) {
    this.options = options;
    this.refusal = refusal;
    if (options.concurrency < 1 || options.perClient < 1) throw new RangeError("BoundedLane: concurrency and perClient must be at least 1");
    this.retryAfterSeconds = Math.max(1, Math.ceil(options.queueTimeoutMs / 1000));
  }

  stats(): LaneStats {
    return { running: this.running, waiting: this.queue.length, refused: this.refused };
  }

  /** Runs `work` when the lane and `client`'s share of it have room, in arrival order; refuses it past the queue's deadline. */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    const own = this.byClient.get(client) ?? { running: 0, waiting: 0 };
    this.byClient.set(client, own);
    if (this.running < this.options.concurrency && own.running < this.options.perClient) {
      this.running++;
      own.running++;
    } else {
      await this.wait(client, own); // its slot is taken for it (next) before it resumes
    }
    try {
      return await work();
    } finally {
      this.running--;
      own.running--;
      this.forget(client, own);
      this.next();
    }
  }

  private wait(client: string, own: Share): Promise<void> {
    if (own.waiting >= MAX_WAITING_PER_CLIENT || this.queue.length >= MAX_WAITING) {
      this.refused++;
      this.forget(client, own);
      return Promise.reject(this.refusal("too many are waiting", this.retryAfterSeconds));
    }
    own.waiting++;
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting = {
        own,
        start: () => {
          clearTimeout(entry.timer);
          own.waiting--;
          resolve();
        },
        refuse: (error) => {
          own.waiting--;
          this.refused++;
          this.forget(client, own);
          reject(error);
        },
        timer: setTimeout(() => {
          const at = this.queue.indexOf(entry);
          if (at >= 0) this.queue.splice(at, 1);
          entry.refuse(this.refusal(`no room within ${this.options.queueTimeoutMs} ms`, this.retryAfterSeconds));
        }, this.options.queueTimeoutMs),
      };
      this.queue.push(entry);
    });
  }

  /** Starts the first waiting pieces of work whose client has room (FIFO among those that may run). */
  private next(): void {
    for (let i = 0; i < this.queue.length && this.running < this.options.concurrency; ) {
      const entry = this.queue[i]!;
      if (entry.own.running < this.options.perClient) {
        this.queue.splice(i, 1);
        // Counted as running now, before its caller resumes: no other piece of work takes the slot meanwhile.
        this.running++;
        entry.own.running++;
        entry.start();
      } else i++;
    }
  }

  private forget(client: string, own: Share): void {
    if (own.running === 0 && own.waiting === 0) this.byClient.delete(client);
  }
}
