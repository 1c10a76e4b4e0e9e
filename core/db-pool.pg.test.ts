import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { openDatabase, type Database } from "./db.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";

// A pool keeps the connections it opened. One that closed its idle connections (the driver's
// default, after 10 s) opened them again at the next burst: a new backend, its catalog caches
// and every prepared statement again, tens of milliseconds on a request's path. At a moderate
// rate that was the p99 of every bench:gateways open-loop run ("new pg sessions 10").

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const APP = "bet-api-pool-test";
const POOL_SIZE = 3;
const IDLE_MS = 200;
const LIFETIME_APP = "bet-api-pool-lifetime-test";

/**
 * The kernel's timer state ("tr") of this process's TCP sockets by local port, from /proc/net/tcp
 * and tcp6: 2 is the keepalive timer armed on an idle connection; 0 is none (no SO_KEEPALIVE).
 */
function socketTimersByLocalPort(): Map<number, number> {
  const timers = new Map<number, number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const timer = fields[5];
      if (!local || !timer) continue;
      timers.set(Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16), Number.parseInt(timer.slice(0, 2), 16));
    }
  }
  return timers;
}

describe.skipIf(!onPostgres)("the PostgreSQL pool (PostgreSQL)", () => {
  let test: TestDatabase;
  let db: Database;
  let admin: pg.Client;
  beforeAll(async () => {
    test = await createTestDatabase();
    db = await openDatabase({ url: test.url, poolSize: POOL_SIZE, applicationName: APP, idleTimeoutMs: IDLE_MS });
    admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.close();
    await test?.close();
  });

  const connections = async () =>
    Number(
      (await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [APP]))
        .rows[0]?.n,
    );

  it("turns on TCP keepalive on the connections it keeps, so a peer that vanished silently is found", async () => {
    // A kept connection may sit idle for hours; without keepalive, one whose server or network
    // path died without a FIN or RST looks healthy until a request's statement waits on it.
    await Promise.all(Array.from({ length: POOL_SIZE }, () => db.prisma.$queryRaw`SELECT pg_sleep(0.05)::text AS slept`));
    const ports = (
      await admin.query<{ port: number }>("SELECT client_port AS port FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [
        APP,
      ])
    ).rows.map((row) => row.port);
    expect(ports).toHaveLength(POOL_SIZE);
    const timers = socketTimersByLocalPort();
    expect(ports.map((port) => timers.get(port))).toEqual(ports.map(() => 2));
  });

  it("replaces a connection past its lifetime, so none outlives a server-side change for long", async () => {
    const short = await openDatabase({ url: test.url, poolSize: 1, applicationName: LIFETIME_APP, maxLifetimeSeconds: 1 });
    try {
      const backend = async () => (await short.prisma.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]?.pid;
      const first = await backend();
      expect(first).toBeGreaterThan(0);
      expect(await backend()).toBe(first);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const second = await backend();
      expect(second).toBeGreaterThan(0);
      expect(second).not.toBe(first);
    } finally {
      await short.close();
    }
  });

  it("keeps every connection a burst opened after they sit idle past the idle timeout", async () => {
    await Promise.all(Array.from({ length: POOL_SIZE }, () => db.prisma.$queryRaw`SELECT pg_sleep(0.1)::text AS slept`));
    expect(await connections()).toBe(POOL_SIZE);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 5));
    expect(await connections()).toBe(POOL_SIZE);
  });
});
