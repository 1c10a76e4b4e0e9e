import type { Database } from "../../core/db.ts";
import type { Logger } from "../../core/logger.ts";
import type { NetworkDirectory } from "../../core/networks.ts";
import type { ReadRouter } from "../../core/read-replicas.ts";
import type { ExpensiveLane } from "./expensive-lane.ts";
import type { ReadAt } from "./read-at.ts";

/** What every subgraph is built from: passed in by a composition root (bin/) or a test, never read from globals. */
export interface SubgraphDeps {
  db: Database;
  logger: Logger;
  networks: NetworkDirectory;
  production: boolean;
  /**
   * Read replicas (DATABASE_READ_URLS): each request's `db` is the one the router picks, a replica in
   * step or the primary. One router per process, shared by every subgraph in it, so that its floor
   * (the highest indexed head served) holds across them. Unset: every read on `db`.
   */
  reads?: ReadRouter;
  /** The indexed heads the request being served reads at, set per request before its resolvers run (kit/read-at.ts). */
  readAt?: ReadAt;
  /** How long a database's indexed heads, once read, are answered at without reading them again (kit/indexed-heads.ts); unset: its default. */
  headsTtlMs?: number;
  /** The read pin of the request being served (READ_PIN_HEADER), set per request with its `db`; for `reads.observe`. */
  readPin?: string;
  /** The process's lane for statements that may read much of the table (kit/expensive-lane.ts); unset: they run unbounded. */
  expensiveLane?: ExpensiveLane;
  /** The client of the request being served, as its gateway named it (CLIENT_ADDRESS_HEADER), set per request. */
  clientAddress?: string;
  /** The key page cursors are signed under (history subgraph); unset: a key of this process only. */
  cursorKey?: Uint8Array;
  /** During a rotation of the cursor key: cursors signed under it are still accepted (history subgraph). */
  previousCursorKey?: Uint8Array;
  /** How operations run (kit/executor.ts): compiled, the default, or by graphql-js (what tests compare it with). */
  execution?: "compiled" | "graphql-js";
}
