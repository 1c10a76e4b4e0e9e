// A database's indexed heads (IndexingCursor rows) as last read, for kit/read-at.ts: a request
// reads at them with no statement of its own while they are younger than `ttlMs`. Heads only grow,
// so heads read before a request's data statements are a lower bound of what those statements see,
// however long before they were read: held heads are always a valid "read at". A request that needs
// more (a minBlock above them, or the `readAt` field itself) reads them afresh, and what it reads
// is held from then on. A head that went back (a reset, a deep reorg) shows within `ttlMs`.
import { isUnavailableError, ServiceUnavailableError } from "../../core/errors.ts";
import type { Database } from "../../core/db.ts";
import type { IndexingCursor } from "../../prisma/generated/client.ts";

/** How long a subgraph process answers at heads it read, by default: as long as the network directory's heads (core/networks.ts). */
export const INDEXED_HEADS_TTL_MS = 1000;

/**
 * The heads, read now: a database that cannot be reached is SERVICE_UNAVAILABLE, answered like the
 * resolvers' errors (an error thrown before execution is otherwise HTTP 500, which the gateway
 * reports as INTERNAL_SERVER_ERROR).
 */
const readCursors = (db: Database) =>
  db.prisma.indexingCursor.findMany().catch((error: unknown) => {
    if (!isUnavailableError(error)) throw error;
    throw new ServiceUnavailableError(undefined, { http: { status: 200 } });
  });

export class IndexedHeads {
  private held: { cursors: IndexingCursor[]; readStartedAt: number } | undefined;
  /** The reading that requests finding the held heads too old share (one statement for all of them). */
  private refreshing: Promise<IndexingCursor[]> | undefined;

  private readonly db: Database;
  private readonly ttlMs: number;
  constructor(db: Database, ttlMs = INDEXED_HEADS_TTL_MS) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  /** The held heads while younger than `ttlMs`, else read again (one reading shared by the requests waiting for it). */
  async current(): Promise<IndexingCursor[]> {
    if (this.held && performance.now() - this.held.readStartedAt < this.ttlMs) return this.held.cursors;
    this.refreshing ??= this.read().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** The heads read now by a statement of this caller's own (none shared: one begun earlier may miss a block the caller knows of). */
  async read(): Promise<IndexingCursor[]> {
    const readStartedAt = performance.now();
    const cursors = await readCursors(this.db);
    // The newest reading wins, even when lower (a reset): the database says so now. An older one
    // finishing later is not taken: it would go back behind what was answered meanwhile.
    if (!this.held || this.held.readStartedAt <= readStartedAt) this.held = { cursors, readStartedAt };
    return cursors;
  }
}
