import "dotenv/config";
import { defineConfig } from "prisma/config";

// Prisma 7 reads the connection strings from here (a `url` in schema.prisma is an error).
// DATABASE_URL is only required by commands that talk to a database (migrate, db, diff --from-url);
// `prisma generate` works without it. SHADOW_DATABASE_URL is optional: without it, `migrate dev`
// and `migrate diff --from-migrations` create (and drop) a temporary shadow database themselves.
const url = process.env.DATABASE_URL;
const shadowDatabaseUrl = process.env.SHADOW_DATABASE_URL;

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    ...(url ? { url } : {}),
    ...(shadowDatabaseUrl ? { shadowDatabaseUrl } : {}),
  },
});
