// `npm run db:migrate`, and the one-shot `migrate` service of docker-compose.yml: applies pending
// migrations (prisma/migrate.ts) to DATABASE_URL, else to the PGlite database in DATA_DIR.
//   --url postgres://…   another PostgreSQL database
//   --data-dir ./.data   another PGlite data directory
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { migratePglite, migratePostgres } from "../prisma/migrate.ts";

const { values } = parseArgs({ options: { url: { type: "string" }, "data-dir": { type: "string" } } });

try {
  const config = loadConfig(["shared"]);
  const logger = createLogger({ name: "migrate", level: config.LOG_LEVEL });
  const url = values.url ?? config.DATABASE_URL;
  if (url) {
    const result = await migratePostgres(url, { logger });
    logger.info({ applied: result.applied, alreadyApplied: result.alreadyApplied.length }, "PostgreSQL database is up to date");
  } else {
    const dataDir = resolve(values["data-dir"] ?? config.DATA_DIR);
    mkdirSync(dataDir, { recursive: true });
    const db = await PGlite.create({ dataDir });
    try {
      const result = await migratePglite(db, { logger });
      logger.info({ dataDir, applied: result.applied, alreadyApplied: result.alreadyApplied.length }, "PGlite database is up to date");
    } finally {
      await db.close();
    }
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
