import type { Database } from "../../core/db.ts";
import type { Logger } from "../../core/logger.ts";
import type { NetworkDirectory } from "../../core/networks.ts";

/** What every subgraph is built from: passed in by a composition root (bin/) or a test, never read from globals. */
export interface SubgraphDeps {
  db: Database;
  logger: Logger;
  networks: NetworkDirectory;
  production: boolean;
}
