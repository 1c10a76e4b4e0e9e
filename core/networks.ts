import type { Database } from "./db.ts";
import { InputError } from "./errors.ts";
import { depthAt, type Depth } from "./finality.ts";

/** What every subgraph needs to know of a network on a hot path: it exists, and how deep its head is. */
export interface NetworkEntry {
  chainId: number;
  name: string;
  confirmations: number;
  headBlock: bigint | null;
  finalizedBlock: bigint | null;
}

/**
 * A process-wide view of the indexed networks, refreshed at most every `ttlMs` (one small query)
 * so that checking a chainId or computing confirmations never costs a query per request. Heads
 * may be up to `ttlMs` old: `confirmations` can lag by that much, never run ahead.
 */
export class NetworkDirectory {
  private snapshot: Map<number, NetworkEntry> | undefined;
  private loadedAt = 0;
  private loading: Promise<Map<number, NetworkEntry>> | undefined;

  private readonly db: Database;
  private readonly ttlMs: number;
  constructor(db: Database, ttlMs = 1000) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  async all(): Promise<Map<number, NetworkEntry>> {
    if (this.snapshot && Date.now() - this.loadedAt < this.ttlMs) return this.snapshot;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** The snapshot while it is fresh, with no await; undefined when `all()` must load it. */
  fresh(): Map<number, NetworkEntry> | undefined {
    return this.snapshot && Date.now() - this.loadedAt < this.ttlMs ? this.snapshot : undefined;
  }

  async get(chainId: number | bigint): Promise<NetworkEntry | undefined> {
    return (await this.all()).get(Number(chainId));
  }

  /** The network, or BAD_USER_INPUT naming the argument: an unknown chainId is malformed input. */
  async require(chainId: number, argumentName = "chainId"): Promise<NetworkEntry> {
    const entry = await this.get(chainId);
    if (!entry) throw new InputError(`Unknown chainId ${chainId}: see networkConfigs for the indexed networks`, { argumentName });
    return entry;
  }

  private async load(): Promise<Map<number, NetworkEntry>> {
    const rows = await this.db.prisma.network.findMany({
      select: { chainId: true, name: true, confirmations: true, cursor: { select: { headBlock: true, finalizedBlock: true } } },
    });
    const snapshot = new Map<number, NetworkEntry>();
    for (const row of rows) {
      snapshot.set(Number(row.chainId), {
        chainId: Number(row.chainId),
        name: row.name,
        confirmations: row.confirmations,
        headBlock: row.cursor?.headBlock ?? null,
        finalizedBlock: row.cursor?.finalizedBlock ?? null,
      });
    }
    this.snapshot = snapshot;
    this.loadedAt = Date.now();
    return snapshot;
  }
}

/**
 * Depth of a bet's latest state change at the network's recorded head: the one finality rule of
 * core/finality.ts (a change in the head block has 1 confirmation; final once confirmations reach
 * the network's setting).
 */
export function betDepth(lastChangeBlock: bigint, network: NetworkEntry | undefined): Depth {
  return depthAt(lastChangeBlock, network?.headBlock ?? null, network?.confirmations ?? 0);
}
