// Statements that stop when the request they serve is abandoned (a CSV export whose client left).
// Prisma's queries take no signal, so the signal travels in async context: adapter-pg runs each
// statement outside a transaction as `pool.query(config)`, and that call, inside `cancellable`,
// takes a connection of its own, gives it up unused if the signal fires while it waits for one,
// and asks the server to cancel the statement (pg_cancel_backend) if the signal fires while it runs.
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { isUnavailableError } from "./errors.ts";

const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `run`; the statements it sends through a pool wrapped by `cancelStatementsOnAbort` end when `signal` fires. */
export function cancellable<T>(signal: AbortSignal, run: () => PromiseLike<T>): Promise<T> {
  // Awaited inside the scope: a Prisma query is lazy and starts only when awaited.
  return scope.run(signal, async () => await run());
}

/** node-postgres sets the server process of a connection at start-up (not in its typings). */
interface BackendKey {
  processID?: number;
}

/** Resolves to a connection of `pool`, or rejects when `signal` fires first (the connection, once it comes, goes back unused). */
function connectUnlessAborted(pool: pg.Pool, signal: AbortSignal): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    pool.connect().then(
      (client) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) {
          client.release();
          reject(signal.reason);
        } else resolve(client);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Makes `pool.query(config)` (the call adapter-pg makes) honour the signal of `cancellable` around
 * it. Cancelling takes a short connection of its own outside the pool (`connectionString`): the
 * pool may be full of exactly the statements to cancel.
 */
export function cancelStatementsOnAbort(pool: pg.Pool, connectionString: string): void {
  const own = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
  const cancelBackend = async (pid: number) => {
    // Bounded: against a frozen server the cancel would otherwise hold the request's connection until it thaws.
    const canceller = new pg.Client({ connectionString, application_name: "cancel", connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
    canceller.on("error", () => undefined);
    try {
      await canceller.connect();
      await canceller.query("SELECT pg_cancel_backend($1)", [pid]);
    } catch {
      // The statement ends anyway under the statement timeout.
    } finally {
      await canceller.end().catch(() => undefined);
    }
  };
  const scoped = async (config: pg.QueryConfig): Promise<pg.QueryResult> => {
    const signal = scope.getStore();
    if (!signal) return own(config);
    signal.throwIfAborted();
    const client = await connectUnlessAborted(pool, signal);
    const pid = (client as BackendKey).processID;
    let cancelled: Promise<void> | undefined;
    const onAbort = () => {
      if (pid !== undefined) cancelled = cancelBackend(pid);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    let unreachable = false;
    try {
      return await client.query(config);
    } catch (error) {
      // The driver gave up on a server that did not answer (query_timeout) or lost it: the
      // statement may still be on that connection, which would hold up every next one.
      unreachable = isUnavailableError(error);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
      // A cancel may land after the statement ended: that connection is closed, not reused, so it
      // cannot reach the next statement on it.
      if (cancelled) await cancelled;
      client.release(cancelled !== undefined || unreachable);
    }
  };
  pool.query = scoped as typeof pool.query;
}
