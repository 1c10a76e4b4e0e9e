import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { GATEWAY_SECTIONS, openConfiguredDatabase, openCsvExportReads, subgraphDeps } from "../bin/wiring.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { createPrivatePostgres, privatePostgresServer, type PrivatePostgres } from "../test/private-postgres.ts";
import { describeWith } from "../test/services.ts";
import { testGatewaySettings } from "../test/stack.ts";

// PostgreSQL stopped under a running service, then started again: clear SERVICE_UNAVAILABLE and
// a 503 DOWN health while it is gone, full recovery without restarting anything. Then frozen (it
// keeps its connections and never answers): the same, within a bound, not a request held forever.

let postgres: PrivatePostgres;
let db: Database;
let stack: RunningStack;
let whale: string;

beforeAll(async () => {
  postgres = await createPrivatePostgres();
  db = await openDatabase({ url: postgres.url, migrate: true, poolSize: 4 });
  ({ whale } = await seedFixtures(db, { bets: 40, proofCache: readProofCache() }));
  stack = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db, 0), production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({ production: true }),
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await db?.close();
  postgres?.destroy();
});

const QUERY = `{ networkConfigs { chainId } betResult(chainId: 31337, betId: "1") { betId status result { won } } }`;

async function ask(on: RunningStack = stack) {
  const response = await fetch(`${on.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: QUERY }),
    // Far above the bound the frozen-server test expects (statement timeout + margin): a request
    // held with no deadline fails here instead of hanging the suite.
    signal: AbortSignal.timeout(30_000),
  });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions: { code: string } }[] };
}

async function health(on: RunningStack = stack) {
  await new Promise((resolve) => setTimeout(resolve, 1100)); // past the report cache
  const response = await fetch(`${on.url}/health`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as { status: string } };
}

// Needs PostgreSQL's server binaries (a private server it can stop): SKIPPED without them, except
// under CI (test/services.ts).
describeWith(privatePostgresServer, "PostgreSQL stops and comes back", () => {
  it("serves, fails clearly while the database is down, and recovers without restart", async () => {
    expect((await ask()).errors).toBeUndefined();

    postgres.stop();
    const down = await ask();
    expect(down.errors!.length).toBeGreaterThan(0);
    for (const error of down.errors!) {
      expect(error.extensions.code).toBe("SERVICE_UNAVAILABLE");
      expect(error.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|terminat/i);
    }
    const unhealthy = await health();
    expect(unhealthy).toMatchObject({ status: 503, body: { status: "DOWN" } });

    postgres.start();
    let recovered: Awaited<ReturnType<typeof ask>> | undefined;
    for (let attempt = 0; attempt < 40; attempt++) {
      recovered = await ask();
      if (!recovered.errors) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(recovered!.errors).toBeUndefined();
    expect(recovered!.data).toMatchObject({ betResult: { betId: "1" } });
    expect((await health()).status).toBe(200);
  });

  it("answers SERVICE_UNAVAILABLE, not never, while the database is frozen, and recovers once it thaws (production wiring)", async () => {
    // The serving pools as bin/start.ts and bin/gateway.ts open them, under a short statement timeout.
    const config = loadConfig(GATEWAY_SECTIONS, {
      DATABASE_URL: postgres.url,
      DATABASE_MIGRATE_ON_START: "false",
      DATABASE_STATEMENT_TIMEOUT_MS: "1000",
      CSV_EXPORT_POOL_SIZE: "1",
    });
    const serving = await openConfiguredDatabase(config, silentLogger(), { migrate: false, statementTimeout: true });
    const exports = await openCsvExportReads(config, serving, silentLogger());
    const wired = await startStack({
      deps: subgraphDeps(serving, silentLogger(), config),
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings({ production: true, walletBetPages: exports.pages }),
    });
    const exportCsv = async () => {
      const response = await fetch(`${wired.url}/wallets/${whale}/bets.csv`, { signal: AbortSignal.timeout(30_000) });
      // An export that fails after its header was sent ends its connection (the client sees it cut).
      const text = await response.text().catch(() => "");
      return { status: response.status, text };
    };
    const exportBackends = async () => {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'csv-export'");
        return rows.map((row) => row.pid);
      } finally {
        await client.end();
      }
    };
    try {
      expect((await ask(wired)).errors).toBeUndefined();
      expect((await exportCsv()).status).toBe(200);
      const [before, ...others] = await exportBackends();
      expect(others).toEqual([]);
      postgres.freeze(true);
      try {
        // An export's page waits no longer than the pool's query timeout: the answer ends, not hangs.
        const stalledExport = await exportCsv();
        expect(stalledExport.text).not.toContain("\n0x");
        const stalled = await ask(wired);
        expect(stalled.errors?.length).toBeGreaterThan(0);
        for (const error of stalled.errors!) {
          expect(error.extensions.code).toBe("SERVICE_UNAVAILABLE");
          expect(error.message).not.toMatch(/timeout|127\.0\.0\.1|postgres/i);
        }
        expect(await health(wired)).toMatchObject({ status: 503, body: { status: "DOWN" } });
      } finally {
        postgres.freeze(false);
      }
      let recovered = await ask(wired);
      for (let attempt = 0; attempt < 40 && recovered.errors; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        recovered = await ask(wired);
      }
      expect(recovered.errors).toBeUndefined();
      expect(recovered.data).toMatchObject({ betResult: { betId: "1" } });
      // The export's connection that gave the frozen server up was closed, not handed to the next
      // export (whose page would queue behind the abandoned statement).
      const thawed = await exportCsv();
      expect(thawed.status).toBe(200);
      expect(await exportBackends()).not.toContain(before);
    } finally {
      await wired.stop();
      await exports.close();
      await serving.close();
    }
  }, 120_000);
});
