import { readFileSync } from "node:fs";
import type { Config } from "./config.ts";
import type { SubgraphDeps } from "./context.ts";
import { openDatabase, type Database } from "./db.ts";
import type { Logger } from "./logger.ts";
import { NetworkDirectory } from "./networks.ts";

/** The service version reported by `health.version`: the package version. */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database in DATA_DIR. */
export function openConfiguredDatabase(config: Config, logger: Logger, options: { migrate?: boolean } = {}): Promise<Database> {
  return openDatabase({ url: config.DATABASE_URL, dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR, logger, migrate: options.migrate ?? true });
}

export function subgraphDeps(db: Database, logger: Logger, config: Config): SubgraphDeps {
  return { db, logger, networks: new NetworkDirectory(db), production: config.NODE_ENV === "production" };
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits; a second signal exits at once. */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
}

/** `main.ts` of a subgraph: read the environment, open the database, listen, stop on signals. */
export async function runSubgraphMain(
  factory: ((deps: SubgraphDeps) => { listen(host: string, port: number): Promise<unknown>; stop(): Promise<void> }) & { subgraphName: string },
  config: Config,
  logger: Logger,
): Promise<void> {
  const db = await openConfiguredDatabase(config, logger, { migrate: false });
  const subgraph = factory(subgraphDeps(db, logger, config));
  await subgraph.listen(config.HOST, config.PORT);
  stopOnSignals(logger, async () => {
    await subgraph.stop();
    await db.close();
  });
}
