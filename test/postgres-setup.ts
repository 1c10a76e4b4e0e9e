// Setup file of the `postgres` test project: points TEST_DATABASE_URL at the embedded server when
// test/postgres-global-setup.ts had to start one (before any test module reads the variable).
import { inject } from "vitest";

const embedded = inject("embeddedDatabaseUrl");
if (embedded) process.env.TEST_DATABASE_URL = embedded;
