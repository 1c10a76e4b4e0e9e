// Snapshots of the indexed tables (bets, results, outbox rows), to compare a database with another
// (a live run with a backfill, a restarted run with an uninterrupted one, a reorg with a fresh index).
import type { Database } from "../core/db.ts";
import type { IndexerEvent } from "../indexer/sync.ts";

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

/** Rows as plain JSON: bigints and decimals as decimal strings. */
function plain(value: unknown): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return value.toString(10);
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && "toFixed" in value && typeof (value as { toFixed: unknown }).toFixed === "function") {
    return (value as { toFixed(d: number): string }).toFixed(0);
  }
  const out: { [key: string]: Plain } = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = plain(v);
  return out;
}

export interface TableSnapshot {
  bets: Plain[];
  results: Plain[];
  /** Outbox rows in seq order, without seq and createdAt; FINALIZED rows aside (below). */
  updates: Plain[];
  /**
   * The FINALIZED rows, by chainId and betId: when each is written depends on when the head moved
   * (a backfill writes it with the settlement, a live run blocks later), not which ones exist.
   */
  finalized: Plain[];
}

/**
 * The indexed tables of a database, for equality checks. `withDepth: false` drops the payloads'
 * `confirmations` / `finalized` (a snapshot of the head at commit time, which differs between a
 * live run and a backfill of the same chain).
 */
export async function snapshotTables(db: Database, options: { withDepth?: boolean } = {}): Promise<TableSnapshot> {
  const bets = await db.prisma.bet.findMany({ orderBy: [{ chainId: "asc" }, { betId: "asc" }] });
  const results = await db.prisma.betResult.findMany({ orderBy: [{ chainId: "asc" }, { betId: "asc" }] });
  const updates = await db.prisma.betUpdate.findMany({ orderBy: { seq: "asc" } });
  const snapshot = ({ seq: _seq, createdAt: _createdAt, bet, ...row }: (typeof updates)[number]) => {
    const payload = { ...(bet as Record<string, unknown>) };
    if (options.withDepth === false) {
      delete payload.confirmations;
      delete payload.finalized;
    }
    return plain({ ...row, bet: payload });
  };
  const finalized = updates
    .filter((u) => u.type === "FINALIZED")
    .sort((a, b) => (a.chainId === b.chainId ? a.betId.comparedTo(b.betId) : a.chainId < b.chainId ? -1 : 1));
  return {
    bets: bets.map(plain),
    results: results.map(plain),
    updates: updates.filter((u) => u.type !== "FINALIZED").map(snapshot),
    finalized: finalized.map(snapshot),
  };
}

/** The last outbox row of every bet (as snapshotTables lays rows out), keyed by chainId:betId. */
export function lastUpdates(snapshot: TableSnapshot): Map<string, Plain> {
  const out = new Map<string, Plain>();
  for (const row of snapshot.updates) {
    const r = row as { chainId: string; betId: string };
    out.set(`${r.chainId}:${r.betId}`, row);
  }
  return out;
}

/**
 * Where the outbox, read in seq order, disagrees with the order in which the indexer committed
 * (its `block` / `reorg` / `reset` events, emitted after each commit, in order): the rows must split
 * into consecutive runs, one per commit, of exactly that commit's size, each run's rows from that
 * commit's blocks in chain order (or, for a rollback, REMOVED / reverted PLACED rows). Reading rows "ordered by
 * seq" and finding the seqs increasing proves nothing; this fails when seq order is not commit order.
 */
export async function commitOrderViolations(db: Database, events: readonly IndexerEvent[]): Promise<string[]> {
  const rows = await db.prisma.betUpdate.findMany({ select: { seq: true, type: true, blockNumber: true, betId: true }, orderBy: { seq: "asc" } });
  const violations: string[] = [];
  let at = 0;
  for (const [commit, event] of events.entries()) {
    const size =
      event.type === "block"
        ? event.events + event.finalized
        : event.type === "reorg"
          ? event.removed.length + event.reverted.length
          : event.type === "reset"
            ? event.removed
            : event.type === "finalized"
              ? event.updates
              : 0;
    const run = rows.slice(at, at + size);
    if (run.length < size) violations.push(`commit ${commit} (${event.type}) wrote ${size} rows, the outbox has ${run.length} left`);
    // A commit's FINALIZED rows follow its events' rows (checked apart: their blocks are older).
    const announced = event.type === "block" ? run.splice(event.events) : [];
    if (announced.some((row) => row.type !== "FINALIZED")) violations.push(`commit ${commit}: rows after its events that are not FINALIZED`);
    for (const row of run) {
      const fits =
        event.type === "block"
          ? row.blockNumber >= event.fromBlock && row.blockNumber <= event.toBlock && row.type !== "FINALIZED"
          : event.type === "finalized"
            ? row.type === "FINALIZED"
            : event.type === "reorg"
              ? row.type === "REMOVED" || row.type === "PLACED"
              : row.type === "REMOVED";
      if (!fits)
        violations.push(
          `seq ${row.seq} (${row.type}, block ${row.blockNumber}) is not from commit ${commit} (${JSON.stringify(event, (_k, v) => (typeof v === "bigint" ? v.toString() : v))})`,
        );
    }
    // Within a commit of blocks: chain order (blocks ascending; a bet placed before it is settled or refunded).
    if (event.type === "block") {
      const placed = new Set<string>();
      for (const [i, row] of run.entries()) {
        const previous = run[i - 1];
        if (previous && row.blockNumber < previous.blockNumber)
          violations.push(`seq ${row.seq} (block ${row.blockNumber}) after seq ${previous.seq} (block ${previous.blockNumber})`);
        const bet = row.betId.toFixed(0);
        if (row.type === "PLACED") placed.add(bet);
        else if (run.some((other) => other.type === "PLACED" && other.betId.toFixed(0) === bet) && !placed.has(bet)) {
          violations.push(`seq ${row.seq}: bet ${bet} ${row.type} before its PLACED in the same commit`);
        }
      }
    }
    at += size;
  }
  if (at < rows.length) violations.push(`${rows.length - at} outbox rows after the last commit`);
  return violations;
}

/** Seq values of the outbox, in order. */
export async function outboxSeqs(db: Database): Promise<bigint[]> {
  return (await db.prisma.betUpdate.findMany({ select: { seq: true }, orderBy: { seq: "asc" } })).map((r) => r.seq);
}
