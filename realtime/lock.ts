// Leadership for the publisher: of all running publishers exactly one holds the lock and publishes.
//
// - PostgreSQL advisory lock on a dedicated connection (`pg_advisory_lock`, which blocks): standbys
//   wait inside PostgreSQL and the first in line gets the lock the moment the holder's session
//   ends — a crashed or killed process closes its TCP connection, so takeover is immediate. Advisory
//   locks are per database, so each deployment (and each test database) has its own.
// - local: a single process (embedded PGlite) has nothing to compete with.
//
// A holder that loses its connection is told (`onLost`) and stops publishing; if it still publishes
// a batch on the way out, nodes drop the repeats by seq (realtime/stream.ts).
import pg from "pg";
import { endClient, POSTGRES_KEEPALIVE } from "../core/db.ts";
import { waitAtMost } from "../core/wait-at-most.ts";
import type { Logger } from "../core/logger.ts";
import { splitSchemaParam } from "../prisma/migrate.ts";

export interface PublisherLock {
  readonly kind: "postgres" | "local";
  /** Resolves once this process holds the lock; rejects when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<void>;
  /** Called once when a held lock is lost (its connection ended). */
  onLost(listener: () => void): void;
  /** Gives the lock up (idempotent). */
  release(): Promise<void>;
}

/** Any constant shared by all publishers of a database ("rtpb"). */
export const PUBLISHER_LOCK_KEY = 0x72747062;

export function createLocalLock(): PublisherLock {
  return {
    kind: "local",
    async acquire(signal) {
      if (signal.aborted) throw new Error("aborted");
    },
    onLost() {},
    async release() {},
  };
}

const RETRY_MS = [200, 500, 1_000, 2_000, 5_000];
/** How long release() waits for the unlock's answer before it just closes the session. */
const UNLOCK_TIMEOUT_MS = 1_000;

export interface PgAdvisoryLockOptions {
  url: string;
  logger: Logger;
  key?: number;
}

export function createPgAdvisoryLock(options: PgAdvisoryLockOptions): PublisherLock {
  const { connectionString } = splitSchemaParam(options.url);
  const key = options.key ?? PUBLISHER_LOCK_KEY;
  let client: pg.Client | undefined;
  let held = false;
  const listeners = new Set<() => void>();

  const drop = async (current: pg.Client) => {
    if (client === current) client = undefined;
    await endClient(current);
  };

  const attempt = async (signal: AbortSignal): Promise<void> => {
    const current = new pg.Client({ connectionString, ...POSTGRES_KEEPALIVE, application_name: "realtime-publisher-lock" });
    current.on("error", (error) => options.logger.warn({ err: error.message }, "publisher lock connection failed"));
    client = current;
    const abort = () => void drop(current);
    signal.addEventListener("abort", abort, { once: true });
    try {
      await current.connect();
      await current.query("SELECT pg_advisory_lock($1)", [key]);
    } catch (error) {
      await drop(current);
      throw error;
    } finally {
      signal.removeEventListener("abort", abort);
    }
    if (signal.aborted) {
      await drop(current);
      throw new Error("aborted");
    }
    held = true;
    current.once("end", () => {
      if (!held || client !== current) return;
      held = false;
      client = undefined;
      for (const listener of listeners) listener();
    });
  };

  return {
    kind: "postgres",
    async acquire(signal) {
      for (let failures = 0; ; failures++) {
        if (signal.aborted) throw new Error("aborted");
        try {
          await attempt(signal);
          return;
        } catch (error) {
          if (signal.aborted) throw new Error("aborted");
          const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!;
          options.logger.warn({ err: error instanceof Error ? error.message : String(error), retryInMs: delay }, "publisher lock unavailable");
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
    },
    onLost(listener) {
      listeners.add(listener);
    },
    async release() {
      held = false;
      const current = client;
      if (!current) return;
      // Ending the session releases the lock; unlock first so a standby does not wait for the FIN.
      // Not for long: over a path that died the answer never comes, and the session ends anyway.
      await waitAtMost(current.query("SELECT pg_advisory_unlock($1)", [key]), UNLOCK_TIMEOUT_MS);
      await drop(current);
    },
  };
}
