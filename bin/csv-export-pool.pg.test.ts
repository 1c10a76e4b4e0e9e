import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import type { Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures, type FixtureSummary } from "../fixtures/seed.ts";
import type { WalletBetPages } from "../gateway/csv-export.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { startStack } from "./stack.ts";
import { GATEWAY_SECTIONS, openCsvExportReads } from "./wiring.ts";

// CSV exports never share the connections /health needs (issue 21). Exports whose pages are held
// up (a lock on "Bet" here: every page waits for it, holding its connection) fill their own pool
// (bin/wiring.ts openCsvExportReads); /health answers 200 meanwhile and the gateway's pool never
// has anyone waiting for a connection. The control runs the exports on the gateway's pool, as
// before: the same exports then hold every connection and /health waits for one.

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const EXPORTS = 6;

describe.runIf(onPostgres)("CSV exports on a pool of their own (PostgreSQL)", () => {
  let db: TestDatabase;
  let fixtures: FixtureSummary;
  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 60, proofCache: readProofCache() });
  });
  afterAll(async () => {
    await db?.close();
  });

  /** Exports held up on a lock while /health is asked; the gateway pool's highest waiting count and /health's status. */
  async function exportsBesideHealth(pages: WalletBetPages, pagesDb: Database): Promise<{ health: number; maxWaiting: number }> {
    const stack = await startStack({
      deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false },
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings({ walletBetPages: pages }),
    });
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let maxWaiting = 0;
    let sampler: NodeJS.Timeout | undefined;
    try {
      await locker.query("BEGIN");
      await locker.query('LOCK TABLE "Bet" IN ACCESS EXCLUSIVE MODE');
      // Raw sockets: each asks for the export, then the test closes them (no client library keeps them).
      const sockets = Array.from({ length: EXPORTS }, () => {
        const socket = net.connect(stack.http.port, "127.0.0.1");
        socket.on("error", () => undefined);
        socket.write(`GET /wallets/${fixtures.whale}/bets.csv HTTP/1.1\r\nHost: x\r\n\r\n`);
        return socket;
      });
      // Every connection of the exports' pool is taken by a held-up page, and more pages wait.
      const stats = () => pagesDb.poolStats!();
      while (!(stats().total > 0 && stats().idle === 0 && stats().waiting > 0)) await new Promise((resolve) => setTimeout(resolve, 5));
      sampler = setInterval(() => (maxWaiting = Math.max(maxWaiting, db.poolStats!().waiting)), 2);
      const health = await fetch(`${stack.url}/health`);
      await health.arrayBuffer();
      for (const socket of sockets) socket.destroy();
      return { health: health.status, maxWaiting };
    } finally {
      if (sampler) clearInterval(sampler);
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await stack.stop();
    }
  }

  it("on the gateway's pool (the old wiring), held-up exports make /health wait for a connection", async () => {
    const { maxWaiting } = await exportsBesideHealth((query) => walletBetsPage(db, query), db);
    expect(maxWaiting).toBeGreaterThan(0);
  });

  it("on their own pool, /health answers 200 and never waits for a connection", async () => {
    const config = loadConfig(GATEWAY_SECTIONS, { DATABASE_URL: db.url!, CSV_EXPORT_POOL_SIZE: "2", DATABASE_STATEMENT_TIMEOUT_MS: "60000" });
    const exports = await openCsvExportReads(config, db, silentLogger());
    try {
      expect(exports.db).not.toBe(db);
      const { health, maxWaiting } = await exportsBesideHealth(exports.pages, exports.db);
      expect(health).toBe(200);
      expect(maxWaiting).toBe(0);
    } finally {
      await exports.close();
    }
  });

  it("cancels the statements of exports whose client left, and runs none of theirs still waiting for a connection", async () => {
    const config = loadConfig(GATEWAY_SECTIONS, { DATABASE_URL: db.url!, CSV_EXPORT_POOL_SIZE: "2", DATABASE_STATEMENT_TIMEOUT_MS: "60000" });
    const exports = await openCsvExportReads(config, db, silentLogger());
    const stack = await startStack({
      deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false },
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings({ walletBetPages: exports.pages }),
    });
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    // Outside the locker's transaction, whose view of pg_stat_activity is a snapshot.
    const monitor = new pg.Client({ connectionString: db.url });
    await monitor.connect();
    /** The exports' statements the server is running (each waits for the lock). */
    const running = async () => {
      const { rows } = await monitor.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'csv-export' AND state = 'active' AND pid <> pg_backend_pid()",
      );
      return rows[0]!.n;
    };
    try {
      await locker.query("BEGIN");
      await locker.query('LOCK TABLE "Bet" IN ACCESS EXCLUSIVE MODE');
      const sockets = Array.from({ length: EXPORTS }, () => {
        const socket = net.connect(stack.http.port, "127.0.0.1");
        socket.on("error", () => undefined);
        socket.write(`GET /wallets/${fixtures.whale}/bets.csv HTTP/1.1\r\nHost: x\r\n\r\n`);
        return socket;
      });
      const stats = () => exports.db.poolStats!();
      let seen = "";
      await eventually(
        async () => {
          seen = JSON.stringify(stats());
          return stats().waiting > 0 && (await running()) === 2;
        },
        30_000,
        () => seen,
      );
      for (const socket of sockets) socket.destroy();
      // Every client has left: nothing of theirs runs or waits, while the lock is still held.
      await eventually(
        async () => (await running()) === 0 && stats().waiting === 0,
        15_000,
        () => `exports still running: ${JSON.stringify(stats())}`,
      );
      expect(await running()).toBe(0);
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await monitor.end();
      await stack.stop();
      await exports.close();
    }
  });

  it("runs the exports' statements under the statement timeout", async () => {
    const config = loadConfig(GATEWAY_SECTIONS, { DATABASE_URL: db.url!, DATABASE_STATEMENT_TIMEOUT_MS: "200" });
    const exports = await openCsvExportReads(config, db, silentLogger());
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query('LOCK TABLE "Bet" IN ACCESS EXCLUSIVE MODE');
      await expect(exports.pages({ wallet: fixtures.whale, take: 10 })).rejects.toThrow(/statement timeout/);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
      await exports.close();
    }
  });
});
