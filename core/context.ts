import type { Database } from "./db.ts";
import type { Logger } from "./logger.ts";
import type { NetworkDirectory } from "./networks.ts";

/** What every subgraph is built from: passed in by `main.ts` or a test, never read from globals. */
export interface SubgraphDeps {
  db: Database;
  logger: Logger;
  networks: NetworkDirectory;
  production: boolean;
}
