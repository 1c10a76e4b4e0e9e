// The subgraphs' reads spread over PostgreSQL streaming replicas (DATABASE_READ_URLS); the primary
// (DATABASE_URL) stays the only writer: the indexer, the outbox and migrations never come here.
//
// A check every `checkIntervalMs` reads each server's indexed head per chain ("IndexingCursor"
// ."indexedBlock") on a connection of its own, and its WAL position: the primary's write position
// (pg_current_wal_lsn), each replica's replay position (pg_last_wal_replay_lsn). A replica may
// serve when it
//   - answered its last check, not longer ago than three intervals (dead or stalled: skipped, and
//     checked again at the next interval);
//   - is at most `maxLagBlocks` behind the primary's head on every chain (as of the same check);
//   - has replayed, as of its last check, everything the primary had written `maxReplayLagMs` ago
//     (replayLagMs: a replica whose replay stopped is skipped even when no block was indexed);
//   - is at or above the process's floor on every chain: the highest indexed head this process has
//     served (`observe`, called by the networks subgraph with what it read).
// A request without a read pin reads from the next such replica (round robin), else the primary.
// A request with a pin (every subgraph call of one gateway request carries the same one,
// gateway/subgraph-source.ts) reads from the replica the pin hashes to, over the configured list,
// when it may serve, else from the primary; and, within this process, every later call with that
// pin reads where the first one did (unless that replica went down: then the primary), so a
// gateway request never combines answers of two replicas. Replica heads only grow (replay), so a
// replica whose checked head reached the floor is still there when the request runs: within a
// process, a client never sees the indexed head go back, whichever server answers
// (docs/guides/operating.md).
import pg from "pg";
import { splitSchemaParam } from "../prisma/migrate.ts";
import { openDatabase, POSTGRES_KEEPALIVE, stalledServerDeadline, type Database } from "./db.ts";
import type { Logger } from "./logger.ts";
import { quoteIdent } from "./sql.ts";

/** Indexed head (block number) per chain id. */
export type Heads = ReadonlyMap<bigint, bigint>;

/** What the last checks saw of one replica. */
export interface ReplicaView {
  /** Its heads at its last successful check; undefined before the first one. */
  heads: Heads | undefined;
  /** When it last answered a check (ms, `Date.now()`); 0: never. */
  checkedAt: number;
  /** False after a failed check or a failed read, until the next successful check. */
  up: boolean;
  /** Its replay lag at its last check (replayLagMs); undefined: not measured (not in recovery). */
  replayLagMs?: number;
}

/** One reading of the primary's WAL write position: `lsn` was written by `at` (ms). */
export interface WalSample {
  at: number;
  lsn: bigint;
}

/** A PostgreSQL LSN ("16/B374D848") as a byte position. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split("/");
  if (high === undefined || low === undefined || !/^[0-9A-Fa-f]{1,8}$/.test(high) || !/^[0-9A-Fa-f]{1,8}$/.test(low)) throw new Error(`not an LSN: ${text}`);
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * How long a replica that replayed up to `replayed` has been missing something the primary had
 * written, as of `now`: the age of the oldest primary reading (`samples`, oldest first) beyond
 * `replayed`; 0 when it has replayed every reading (an idle primary lags nobody). A lower bound,
 * as fine as the readings: what the replica misses was on the primary by that reading at the latest.
 */
export function replayLagMs(samples: readonly WalSample[], replayed: bigint, now: number): number {
  for (const sample of samples) if (sample.lsn > replayed) return Math.max(0, now - sample.at);
  return 0;
}

/** The replica (index into the configured list) a read pin maps to: FNV-1a of the pin, modulo `count`. */
export function pinnedIndex(pin: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pin.length; i++) hash = Math.imul(hash ^ pin.charCodeAt(i), 0x01000193) >>> 0;
  // FNV's low bits mix poorly for short keys that differ in the last characters: fold the high half in.
  return ((hash ^ (hash >>> 16)) >>> 0) % count;
}

/** Why a replica is not serving, or "serving". */
export type ReplicaState = "serving" | "unchecked" | "down" | "stale" | "lagging" | "replay-lag" | "behind-floor";

/** The one routing rule, pure: the state of a replica given the primary's heads and the floor. */
export function replicaState(
  replica: ReplicaView,
  primary: Heads | undefined,
  floor: Heads,
  rule: { maxLagBlocks: number; maxReplayLagMs: number; staleAfterMs: number; now: number },
): ReplicaState {
  if (!replica.heads) return "unchecked";
  if (!replica.up) return "down";
  if (rule.now - replica.checkedAt > rule.staleAfterMs) return "stale";
  if ((replica.replayLagMs ?? 0) > rule.maxReplayLagMs) return "replay-lag";
  // Without a primary's reading the lag is unknown: only the floor can vouch for a replica then.
  for (const [chainId, head] of primary ?? []) {
    if (head - (replica.heads.get(chainId) ?? -1n) > BigInt(rule.maxLagBlocks)) return "lagging";
  }
  for (const [chainId, served] of floor) {
    if ((replica.heads.get(chainId) ?? -1n) < served) return "behind-floor";
  }
  return "serving";
}

export interface ReadRouterOptions {
  /** The primary's serving database (DATABASE_URL): reads go there when no replica may serve. */
  primary: Database;
  primaryUrl: string;
  /** postgres:// URLs of the replicas. */
  replicaUrls: readonly string[];
  maxLagBlocks: number;
  /** A replica that has not replayed what the primary had written this long ago is skipped. */
  maxReplayLagMs: number;
  checkIntervalMs: number;
  /** Connect timeout of replica connections and deadline of a check. */
  connectTimeoutMs: number;
  /** Pool size of each replica (DATABASE_POOL_SIZE). */
  poolSize: number;
  /** Server-side statement timeout of replica reads (DATABASE_STATEMENT_TIMEOUT_MS; 0: none). */
  statementTimeoutMs: number;
  logger: Logger;
}

export interface ReplicaStatus {
  host: string;
  state: ReplicaState;
  heads: Record<string, string>;
  /** Replay lag at its last check (ms); null: not measured. */
  replayLagMs: number | null;
}

export interface ReadRouter {
  /**
   * The database one subgraph request reads from: a replica in step, else the primary. With a read
   * pin (READ_PIN_HEADER), the same server for every request with that pin (see above). With a
   * `minimum` (a query's minBlock, core/min-block.ts), only a replica whose checked head is at least
   * that on each chain, else the primary; a pinned request that asks for more than its replica had
   * reads from the primary from then on.
   */
  pick(pin?: string, minimum?: Heads): Database;
  /**
   * Raises the floor with indexed heads a request is about to serve; with its read pin, also notes
   * them as seen on the server the pin reads from (it has replayed at least that far).
   */
  observe(cursors: readonly { chainId: bigint; indexedBlock: bigint }[], pin?: string): void;
  /** Checks every server now (also runs every `checkIntervalMs`). */
  check(): Promise<void>;
  status(): ReplicaStatus[];
  close(): Promise<void>;
}

/** application_name of replica connections (visible in the replica's pg_stat_activity). */
export const READ_APPLICATION_NAME = "bet-api-read";

/** What one check reads of a server. */
interface Reading {
  heads: Heads;
  /** The primary's write position, a replica's replay position; undefined: none (a replica not in recovery). */
  lsn: bigint | undefined;
  /** When the answer arrived (ms). */
  at: number;
}

/** A connection that reads a server's heads and WAL position, re-opened after any failure. */
function headProbe(url: string, timeoutMs: number, role: "primary" | "replica") {
  const { connectionString, schema } = splitSchemaParam(url);
  const table = schema ? `${quoteIdent(schema)}."IndexingCursor"` : `"IndexingCursor"`;
  let client: pg.Client | undefined;
  return {
    async read(): Promise<Reading> {
      try {
        if (!client) {
          const next = new pg.Client({
            connectionString,
            connectionTimeoutMillis: timeoutMs,
            query_timeout: timeoutMs,
            ...POSTGRES_KEEPALIVE,
            application_name: "bet-api-read-check",
          });
          next.on("error", () => undefined);
          client = next;
          await next.connect();
        }
        // The position first: heads read after it are at least as new as it.
        const position = await client.query<{ lsn: string | null }>(
          role === "primary" ? "SELECT pg_current_wal_lsn()::text AS lsn" : "SELECT pg_last_wal_replay_lsn()::text AS lsn",
        );
        const { rows } = await client.query<{ chainId: string; indexedBlock: string }>(`SELECT "chainId"::text, "indexedBlock"::text FROM ${table}`);
        const lsn = position.rows[0]?.lsn;
        return {
          heads: new Map(rows.map((row) => [BigInt(row.chainId), BigInt(row.indexedBlock)])),
          lsn: lsn ? parseLsn(lsn) : undefined,
          at: Date.now(),
        };
      } catch (error) {
        const failed = client;
        client = undefined;
        await failed?.end().catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}

function highest(a: bigint | undefined, b: bigint | undefined): bigint {
  return a === undefined ? (b ?? -1n) : b === undefined || a > b ? a : b;
}

function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}`;
}

export async function createReadRouter(options: ReadRouterOptions): Promise<ReadRouter> {
  const { logger } = options;
  const staleAfterMs = 3 * options.checkIntervalMs;
  const floor = new Map<bigint, bigint>();
  const primaryProbe = headProbe(options.primaryUrl, options.connectTimeoutMs, "primary");
  /** The primary's WAL positions read by the checks, oldest first, kept as long as they can matter. */
  const walSamples: WalSample[] = [];
  const keepSamplesMs = options.maxReplayLagMs + staleAfterMs;
  let primaryHeads: Heads | undefined;
  /**
   * Chains whose primary head went back at a check (a reset, a deep reorg), with the head before:
   * until the primary is back there, a head above its own reading is taken for one from before
   * the reset (a replica that has not replayed it, a read already under way): it neither raises the
   * floor nor may such a replica serve.
   */
  const resets = new Map<bigint, bigint>();
  const beforeReset = (chainId: bigint, head: bigint) => resets.has(chainId) && head > (primaryHeads?.get(chainId) ?? -1n);
  const replicas = await Promise.all(
    options.replicaUrls.map(async (url) => {
      const view: ReplicaView & { host: string; state: ReplicaState } = { heads: undefined, checkedAt: 0, up: false, host: hostOf(url), state: "unchecked" };
      const db = await openDatabase({
        url,
        poolSize: options.poolSize,
        statementTimeoutMs: options.statementTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
        // A stalled replica never answers: given up once the server would have cancelled, with the
        // connect timeout's margin (the read then falls back to the primary).
        queryTimeoutMs: stalledServerDeadline(options.statementTimeoutMs, options.connectTimeoutMs),
        applicationName: READ_APPLICATION_NAME,
        // Serving reads, as the primary's serving pool (bin/wiring.ts): no parallel workers (issue 21).
        parallelWorkersPerGather: 0,
        logger,
        fallback: {
          database: options.primary,
          // A read that could not reach the replica was answered by the primary; no more until it answers a check.
          onFailover(error) {
            if (view.up) logger.warn({ replica: view.host, err: error }, "read replica unreachable: reading from the primary");
            view.up = false;
          },
        },
      });
      return { url, view, db, probe: headProbe(url, options.connectTimeoutMs, "replica") };
    }),
  );
  let next = 0;
  // Pins map over the replicas sorted by URL: every process of a deployment, given the same list in
  // any order, maps one pin to the same replica.
  const pinOrder = [...replicas].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  /** Where each recent pin read in this process (insertion order = age), so later calls read there too. */
  const pinned = new Map<string, { db: Database; replica: (typeof replicas)[number] | undefined; at: number; seen: Map<bigint, bigint> }>();
  const PIN_MEMORY_MS = 60_000;
  const PIN_MEMORY_MAX = 10_000;

  const stateOf = (view: ReplicaView): ReplicaState => {
    const state = replicaState(view, primaryHeads, floor, {
      maxLagBlocks: options.maxLagBlocks,
      maxReplayLagMs: options.maxReplayLagMs,
      staleAfterMs,
      now: Date.now(),
    });
    // Not replayed the reset yet: its head is from before, behind the floor that followed it down.
    if (state === "serving" && [...resets.keys()].some((chainId) => beforeReset(chainId, view.heads?.get(chainId) ?? -1n))) return "behind-floor";
    return state;
  };

  const check = async () => {
    const [primary, ...results] = await Promise.allSettled([primaryProbe.read(), ...replicas.map((r) => r.probe.read())]);
    if (primary?.status === "fulfilled") {
      // The primary's own head went back since its last check (a reorg, a reset): that is the truth
      // now, not a routing artefact, so the floor follows it down. Only then: a reading merely older
      // than a head served meanwhile must not lower the floor.
      for (const [chainId, head] of primary.value.heads) {
        const before = primaryHeads?.get(chainId);
        if (before !== undefined && head < before) {
          if ((floor.get(chainId) ?? -1n) > head) floor.set(chainId, head);
          resets.set(chainId, highest(resets.get(chainId), before));
        }
        // Back where it was before the reset: no head from before can be mistaken for a new one.
        if (head >= (resets.get(chainId) ?? head + 1n)) resets.delete(chainId);
      }
      primaryHeads = primary.value.heads;
      const { lsn, at } = primary.value;
      if (lsn !== undefined) walSamples.push({ at, lsn });
    }
    // Dropping old readings never hides a lag over the bound: one behind every reading kept is
    // judged as old as the oldest, itself older than the bound.
    while (walSamples.length > 1 && walSamples[0]!.at < Date.now() - keepSamplesMs) walSamples.shift();
    results.forEach((result, i) => {
      const { view } = replicas[i]!;
      if (result.status === "fulfilled") {
        view.heads = result.value.heads;
        view.checkedAt = Date.now();
        view.up = true;
        const { lsn, at } = result.value;
        view.replayLagMs = lsn === undefined ? undefined : replayLagMs(walSamples, lsn, at);
      } else {
        view.up = false;
      }
      const state = stateOf(view);
      if (state !== view.state) {
        logger.info({ replica: view.host, state, was: view.state }, state === "serving" ? "read replica serving" : "read replica skipped");
        view.state = state;
      }
    });
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    timer = setTimeout(() => {
      void check()
        .catch((error: unknown) => logger.warn({ err: error }, "read replica check failed"))
        .finally(() => {
          if (!stopped) loop();
        });
    }, options.checkIntervalMs);
    timer.unref();
  };
  await check();
  loop();

  return {
    pick(pin, minimum) {
      /** Whether a replica is known to have indexed `minimum` (heads only grow: a checked head is a lower bound). */
      const reaches = (replica: (typeof replicas)[number], seen?: Heads) =>
        !minimum || [...minimum].every(([chainId, block]) => highest(replica.view.heads?.get(chainId), seen?.get(chainId)) >= block);
      if (pin !== undefined && replicas.length > 0) {
        const now = Date.now();
        const earlier = pinned.get(pin);
        // Remembered for a while: a gateway request's calls come within its timeout.
        if (earlier && earlier.at < now - PIN_MEMORY_MS) pinned.delete(pin);
        else if (earlier) {
          // A later call of a pinned request reads where its first call read, even if that replica
          // has since gone over a lag bound (one consistent view beats a fresher mix). It reads the
          // primary instead, and so does the rest of the request, when the replica is down, or when
          // it may be behind a head served since (by another request, beyond what this one has seen
          // on the replica): the head never goes back. The primary is ahead of any replica.
          const { replica } = earlier;
          if (
            replica &&
            (!replica.view.up ||
              !reaches(replica, earlier.seen) ||
              [...floor].some(([chainId, served]) => highest(replica.view.heads?.get(chainId), earlier.seen.get(chainId)) < served))
          ) {
            earlier.db = options.primary;
            earlier.replica = undefined;
          }
          return earlier.db;
        }
        for (const [key, entry] of pinned) {
          if (entry.at >= now - PIN_MEMORY_MS && pinned.size < PIN_MEMORY_MAX) break;
          pinned.delete(key);
        }
        const replica = pinOrder[pinnedIndex(pin, pinOrder.length)]!;
        // Not another replica: a process whose view of it differs would then read a third server.
        const chosen = stateOf(replica.view) === "serving" && reaches(replica) ? { db: replica.db, replica } : { db: options.primary, replica: undefined };
        pinned.set(pin, { ...chosen, at: now, seen: new Map() });
        return chosen.db;
      }
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[(next + tried) % replicas.length]!;
        if (stateOf(replica.view) === "serving" && reaches(replica)) {
          next = (next + tried + 1) % replicas.length;
          return replica.db;
        }
      }
      return options.primary;
    },
    observe(cursors, pin) {
      const seen = pin === undefined ? undefined : pinned.get(pin)?.seen;
      for (const { chainId, indexedBlock } of cursors) {
        if ((floor.get(chainId) ?? -1n) < indexedBlock && !beforeReset(chainId, indexedBlock)) floor.set(chainId, indexedBlock);
        if (seen && (seen.get(chainId) ?? -1n) < indexedBlock) seen.set(chainId, indexedBlock);
      }
    },
    check,
    status: () =>
      replicas.map(({ view }) => ({
        host: view.host,
        state: stateOf(view),
        heads: Object.fromEntries([...(view.heads ?? [])].map(([chainId, head]) => [chainId.toString(), head.toString()])),
        replayLagMs: view.replayLagMs ?? null,
      })),
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([primaryProbe.close(), ...replicas.map((r) => Promise.all([r.probe.close(), r.db.close()]))]);
    },
  };
}
