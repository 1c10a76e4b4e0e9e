// The subgraphs' reads spread over PostgreSQL streaming replicas (DATABASE_READ_URLS); the primary
// (DATABASE_URL) stays the only writer: the indexer, the outbox and migrations never come here.
//
// A check every `checkIntervalMs` reads each server's indexed head per chain ("IndexingCursor"
// ."indexedBlock") on a connection of its own. A request reads from one replica (round robin) that
//   - answered its last check, not longer ago than three intervals (dead or stalled: skipped, and
//     checked again at the next interval);
//   - is at most `maxLagBlocks` behind the primary's head on every chain (as of the same check);
//   - is at or above the process's floor on every chain: the highest indexed head this process has
//     served (`observe`, called by the networks subgraph with what it read).
// Otherwise the request reads from the primary. Replica heads only grow (replay), so a replica
// whose checked head reached the floor is still there when the request runs: within a process, a
// client never sees the indexed head go back, whichever server answers (docs/guides/operating.md).
import pg from "pg";
import { splitSchemaParam } from "../prisma/migrate.ts";
import { openDatabase, type Database } from "./db.ts";
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
}

/** Why a replica is not serving, or "serving". */
export type ReplicaState = "serving" | "unchecked" | "down" | "stale" | "lagging" | "behind-floor";

/** The one routing rule, pure: the state of a replica given the primary's heads and the floor. */
export function replicaState(
  replica: ReplicaView,
  primary: Heads | undefined,
  floor: Heads,
  rule: { maxLagBlocks: number; staleAfterMs: number; now: number },
): ReplicaState {
  if (!replica.heads) return "unchecked";
  if (!replica.up) return "down";
  if (rule.now - replica.checkedAt > rule.staleAfterMs) return "stale";
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
}

export interface ReadRouter {
  /** The database one request reads from: a replica in step, else the primary. */
  pick(): Database;
  /** Raises the floor with indexed heads a request is about to serve. */
  observe(cursors: readonly { chainId: bigint; indexedBlock: bigint }[]): void;
  /** Checks every server now (also runs every `checkIntervalMs`). */
  check(): Promise<void>;
  status(): ReplicaStatus[];
  close(): Promise<void>;
}

/** application_name of replica connections (visible in the replica's pg_stat_activity). */
export const READ_APPLICATION_NAME = "bet-api-read";

/** A connection that reads a server's heads, re-opened after any failure. */
function headProbe(url: string, timeoutMs: number) {
  const { connectionString, schema } = splitSchemaParam(url);
  const table = schema ? `${quoteIdent(schema)}."IndexingCursor"` : `"IndexingCursor"`;
  let client: pg.Client | undefined;
  return {
    async read(): Promise<Heads> {
      try {
        if (!client) {
          const next = new pg.Client({
            connectionString,
            connectionTimeoutMillis: timeoutMs,
            query_timeout: timeoutMs,
            application_name: "bet-api-read-check",
          });
          next.on("error", () => undefined);
          client = next;
          await next.connect();
        }
        const { rows } = await client.query<{ chainId: string; indexedBlock: string }>(`SELECT "chainId"::text, "indexedBlock"::text FROM ${table}`);
        return new Map(rows.map((row) => [BigInt(row.chainId), BigInt(row.indexedBlock)]));
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

function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}`;
}

export async function createReadRouter(options: ReadRouterOptions): Promise<ReadRouter> {
  const { logger } = options;
  const staleAfterMs = 3 * options.checkIntervalMs;
  const floor = new Map<bigint, bigint>();
  const primaryProbe = headProbe(options.primaryUrl, options.connectTimeoutMs);
  let primaryHeads: Heads | undefined;
  const replicas = await Promise.all(
    options.replicaUrls.map(async (url) => {
      const view: ReplicaView & { host: string; state: ReplicaState } = { heads: undefined, checkedAt: 0, up: false, host: hostOf(url), state: "unchecked" };
      const db = await openDatabase({
        url,
        poolSize: options.poolSize,
        statementTimeoutMs: options.statementTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
        // A stalled server never answers: give up a little after the server would have cancelled.
        queryTimeoutMs: options.statementTimeoutMs > 0 ? options.statementTimeoutMs + options.connectTimeoutMs : undefined,
        applicationName: READ_APPLICATION_NAME,
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
      return { view, db, probe: headProbe(url, options.connectTimeoutMs) };
    }),
  );
  let next = 0;

  const stateOf = (view: ReplicaView) => replicaState(view, primaryHeads, floor, { maxLagBlocks: options.maxLagBlocks, staleAfterMs, now: Date.now() });

  const check = async () => {
    const [primary, ...results] = await Promise.allSettled([primaryProbe.read(), ...replicas.map((r) => r.probe.read())]);
    if (primary?.status === "fulfilled") {
      // The primary's own head went back since its last check (a reorg, a reset): that is the truth
      // now, not a routing artefact, so the floor follows it down. Only then: a reading merely older
      // than a head served meanwhile must not lower the floor.
      for (const [chainId, head] of primary.value) {
        const before = primaryHeads?.get(chainId);
        if (before !== undefined && head < before && (floor.get(chainId) ?? -1n) > head) floor.set(chainId, head);
      }
      primaryHeads = primary.value;
    }
    results.forEach((result, i) => {
      const { view } = replicas[i]!;
      if (result.status === "fulfilled") {
        view.heads = result.value;
        view.checkedAt = Date.now();
        view.up = true;
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
    pick() {
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[(next + tried) % replicas.length]!;
        if (stateOf(replica.view) === "serving") {
          next = (next + tried + 1) % replicas.length;
          return replica.db;
        }
      }
      return options.primary;
    },
    observe(cursors) {
      for (const { chainId, indexedBlock } of cursors) if ((floor.get(chainId) ?? -1n) < indexedBlock) floor.set(chainId, indexedBlock);
    },
    check,
    status: () =>
      replicas.map(({ view }) => ({
        host: view.host,
        state: stateOf(view),
        heads: Object.fromEntries([...(view.heads ?? [])].map(([chainId, head]) => [chainId.toString(), head.toString()])),
      })),
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([primaryProbe.close(), ...replicas.map((r) => Promise.all([r.probe.close(), r.db.close()]))]);
    },
  };
}
