import { defineConfig } from "prisma/config";
import { loadConfig } from "./core/config.ts";

// Prisma 7 reads the connection strings from here (a `url` in schema.prisma is an error), through
// the one configuration parser (which loads .env). DATABASE_URL is only required by commands that
// talk to a database (migrate, db, diff --from-url); `prisma generate` works without it.
// SHADOW_DATABASE_URL is optional: without it, `migrate dev` and `migrate diff --from-migrations`
// create (and drop) a temporary shadow database themselves.
const config = loadConfig(["shared", "tooling"]);

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    ...(config.DATABASE_URL ? { url: config.DATABASE_URL } : {}),
    ...(config.SHADOW_DATABASE_URL ? { shadowDatabaseUrl: config.SHADOW_DATABASE_URL } : {}),
  },
});
