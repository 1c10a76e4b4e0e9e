import { existsSync, readFileSync } from "node:fs";
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
/** Long enough that connecting and two statements fit in it on a loaded machine. */
const LIFETIME_S = 2;

/** The kernel's view of one TCP socket of this machine (/proc/net/tcp and tcp6). */
interface KernelSocket {
  /** "01": established. */
  state: string;
  /** 2: the keepalive timer is armed (an idle connection with SO_KEEPALIVE); 0: no timer. */
  timer: number;
  /** When that timer fires, in clock ticks (1/100 s) from now. */
  ticks: number;
}

/** Established sockets by "localPort>remotePort" (a local port alone may serve several peers). */
function kernelSockets(): Map<string, KernelSocket> {
  const sockets = new Map<string, KernelSocket>();
  const port = (address: string) => Number.parseInt(address.slice(address.lastIndexOf(":") + 1), 16);
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(file)) continue; // tcp6 is absent when IPv6 is off
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const [, local, remote, state, , timer] = line.trim().split(/\s+/);
      if (!local || !remote || !state || !timer || state !== "01") continue;
      const [kind = "", ticks = ""] = timer.split(":");
      sockets.set(`${port(local)}>${port(remote)}`, { state, timer: Number.parseInt(kind, 16), ticks: Number.parseInt(ticks, 16) });
    }
  }
  return sockets;
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
    const serverPort = Number(new URL(test.url ?? "").port || 5432);
    const sockets = kernelSockets();
    const ours = ports.map((port) => sockets.get(`${port}>${serverPort}`));
    // Each idle pool socket has its keepalive timer armed, due within the 10 s delay (the kernel's
    // default delay would read about 7 200 s).
    expect(ours.map((socket) => socket?.timer)).toEqual(ports.map(() => 2));
    for (const socket of ours) expect(socket?.ticks).toBeLessThanOrEqual(10 * 100);
  });

  it("replaces a connection past its lifetime, so none outlives a server-side change for long", async () => {
    const short = await openDatabase({ url: test.url, poolSize: 1, applicationName: LIFETIME_APP, maxLifetimeSeconds: LIFETIME_S });
    try {
      const backend = async () => (await short.prisma.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]?.pid;
      const first = await backend();
      expect(first).toBeGreaterThan(0);
      expect(await backend()).toBe(first);
      await new Promise((resolve) => setTimeout(resolve, LIFETIME_S * 1000 + 500));
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
