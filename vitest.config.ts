import { defineConfig } from "vitest/config";

// `*.db.test.ts` files run twice: on embedded PGlite and on a real PostgreSQL server
// (TEST_DATABASE_URL, default the local one). Everything else runs once.
const dbTests = ["**/*.db.test.ts"];
const exclude = ["**/node_modules/**", ".data/**"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["**/*.test.ts"], exclude: [...exclude, ...dbTests] } },
      { extends: true, test: { name: "pglite", include: dbTests, exclude, env: { TEST_DB: "pglite" } } },
      { extends: true, test: { name: "postgres", include: dbTests, exclude, env: { TEST_DB: "postgres" } } },
    ],
  },
});
