// bench/capacity.ts, replica part: a private PostgreSQL primary and one streaming replica
// (test/replica.ts, as bin/read-replicas.test.ts sets them up), migrated, then outbox rows written
// as the indexer writes them (core/outbox.ts, batches in one transaction each) as fast as one writer
// can for a few seconds, while the primary's pg_stat_replication is sampled: replay lag (time) and
// WAL not yet replayed (bytes).
import pg from "pg";
import { openDatabase } from "../core/db.ts";
import { Outbox } from "../core/outbox.ts";
import { testUpdateRow, wallet } from "../test/outbox.ts";
import { createReplicatedCluster } from "../test/replica.ts";
import { median } from "./common.ts";

export interface ReplicaFigures {
  rowsWritten: number;
  rowsPerSecond: number;
  walMbPerSecond: number;
  samples: number;
  replayLagMsP50: number;
  replayLagMsMax: number;
  replayBytesMax: number;
  /** Time from the last commit until the replica had replayed all of it. */
  catchUpMs: number;
}

export async function measureReplicaLag(options: { seconds: number; batch: number }): Promise<ReplicaFigures> {
  const cluster = await createReplicatedCluster();
  try {
    const db = await openDatabase({ url: cluster.primary.url, migrate: true, poolSize: 2 });
    const probe = new pg.Client({ connectionString: cluster.primary.url, application_name: "bench-capacity-probe" });
    await probe.connect();
    try {
      const outbox = new Outbox(db);
      const lags: number[] = [];
      let maxBytes = 0;
      let writing = true;
      const sampler = (async () => {
        while (writing) {
          const { rows } = await probe.query<{ lag_ms: number | null; behind: string | null }>(
            `SELECT extract(epoch FROM replay_lag) * 1000 AS lag_ms, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS behind FROM pg_stat_replication`,
          );
          const row = rows[0];
          if (row) {
            lags.push(Number(row.lag_ms ?? 0));
            maxBytes = Math.max(maxBytes, Number(row.behind ?? 0));
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const lsn0 = (await probe.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]!.lsn;
      const t0 = performance.now();
      let rows = 0;
      while (performance.now() - t0 < options.seconds * 1000) {
        await outbox.append(
          Array.from({ length: options.batch }, (_, k) =>
            testUpdateRow({ chainId: 31337, betId: String(rows + k + 1), player: wallet((rows + k) % 500), type: k % 3 === 0 ? "PLACED" : "SETTLED" }),
          ),
        );
        rows += options.batch;
      }
      const writeS = (performance.now() - t0) / 1000;
      const lsn1 = (await probe.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]!.lsn;
      const walBytes = Number((await probe.query<{ d: string }>("SELECT pg_wal_lsn_diff($1, $2)::text AS d", [lsn1, lsn0])).rows[0]!.d);
      const caughtUp0 = performance.now();
      for (;;) {
        const { rows: r } = await probe.query<{ done: boolean }>("SELECT bool_and(replay_lsn >= $1::pg_lsn) AS done FROM pg_stat_replication", [lsn1]);
        if (r[0]?.done || performance.now() - caughtUp0 > 60_000) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const catchUpMs = performance.now() - caughtUp0;
      writing = false;
      await sampler;
      await db.close();
      return {
        rowsWritten: rows,
        rowsPerSecond: rows / writeS,
        walMbPerSecond: walBytes / writeS / 1024 / 1024,
        samples: lags.length,
        replayLagMsP50: median(lags),
        replayLagMsMax: Math.max(...lags),
        replayBytesMax: maxBytes,
        catchUpMs,
      };
    } finally {
      await probe.end().catch(() => undefined);
    }
  } finally {
    await cluster.destroy();
  }
}
