// The standalone publisher (bin/publisher.ts, spawned as an operator runs it) under a statement
// that never ends: a lock on the outbox held by another session (a migration, a VACUUM FULL).
// Before issue 21 its pool had no deadline: the poll waited on the lock for as long as it was
// held, without a word, and no update reached any node. Now its poll is cancelled after
// DATABASE_STATEMENT_TIMEOUT_MS: it logs the failure, stands down, retries, and publishes the
// updates written once the lock is gone. Likewise when the path to the server dies with the
// publisher's connections open (a failover, a dropped NAT entry: a loopback proxy here that keeps
// them open and silent): it gives them up and reaches the server again on new connections.
import { randomBytes } from "node:crypto";
import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { insertUpdates, wallet } from "../test/outbox.ts";
import { freePort } from "../test/private-postgres.ts";
import { type Spawned, spawnTypeScript } from "../test/spawn.ts";

const testConfig = loadConfig(["test"]);
const onPostgres = testConfig.TEST_DB === "postgres";

/** The standalone publisher on `databaseUrl` (METRICS_PORT for its published seq), active. */
async function startPublisher(databaseUrl: string, env: Record<string, string> = {}) {
  const metricsPort = await freePort();
  const child = spawnTypeScript("bin/publisher.ts", {
    env: {
      DATABASE_URL: databaseUrl,
      DATABASE_MIGRATE_ON_START: "false",
      DATABASE_STATEMENT_TIMEOUT_MS: "500",
      REDIS_URL: testConfig.TEST_REDIS_URL,
      REALTIME_REDIS_PREFIX: `publisher-deadline-${randomBytes(4).toString("hex")}:`,
      REALTIME_POLL_INTERVAL_MS: "100",
      HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: "info",
      NODE_ENV: undefined,
      OTEL_TRACES_EXPORTER: undefined,
      ...env,
    },
  });
  await child.waitForJson((line) => line.msg === "publisher active", 30_000, "publisher active");
  const publishedSeq = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    return Number(/^publisher_published_seq(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1] ?? -1);
  };
  return { child, publishedSeq };
}

/**
 * A loopback TCP proxy to PostgreSQL. `cut()` models a path that died under open connections: the
 * server's side of each is closed (its session ends, its advisory locks go), the client's stays
 * open and silent, never answering nor closing. Connections made after it are forwarded.
 */
async function startCuttableProxy(target: { host: string; port: number }) {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const held: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on("close", () => {
      if (pairs.delete(pair)) client.destroy();
    });
    client.on("close", () => {
      if (pairs.delete(pair)) upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        pair.client.unpipe(pair.upstream);
        pair.upstream.unpipe(pair.client);
        pair.upstream.destroy();
        // Nothing more reaches the client, and what it sends goes nowhere.
        pair.client.removeAllListeners("data");
        pair.client.on("data", () => undefined);
        held.push(pair.client);
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.runIf(onPostgres)("the standalone publisher under a statement that never ends (PostgreSQL)", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it("gives a poll held up by a lock on the outbox up, says so, and publishes once the lock is gone", async () => {
    const locker = new pg.Client({ connectionString: db.url });
    let publisher: Spawned | undefined;
    try {
      const started = await startPublisher(db.url!);
      publisher = started.child;
      const { publishedSeq } = started;
      const [first] = await insertUpdates(db, [{ chainId: 1, betId: "1", player: wallet(1) }]);
      await eventually(async () => (await publishedSeq()) === Number(first), 10_000, "the first update published");

      // Another session holds the outbox: every read of it waits (lock waits count in statement_timeout).
      await locker.connect();
      await locker.query("BEGIN");
      await locker.query('LOCK TABLE "BetUpdate" IN ACCESS EXCLUSIVE MODE');
      const failed = await publisher.waitForJson<{ err?: unknown }>(
        (line) => line.msg === "publisher failed; standing down",
        8_000,
        "the publisher's poll given up while the outbox is locked (it waits on the lock without a deadline)",
      );
      expect(JSON.stringify(failed.err)).toMatch(/statement timeout|57014/);
      await locker.query("ROLLBACK");

      // It retried on its own: updates written now reach the feed.
      const seqs = await insertUpdates(db, [{ chainId: 1, betId: "2", player: wallet(2) }]);
      await eventually(async () => (await publishedSeq()) === Number(seqs.at(-1)), 10_000, "the update written after the lock published");
    } finally {
      await locker.end().catch(() => undefined);
      // It holds the publishers' lock of this database: the next test's publisher must get it.
      await publisher?.stop();
    }
  }, 45_000);

  it("gives connections on a path that died up, and publishes over new ones", async () => {
    const target = new URL(db.url!);
    const proxy = await startCuttableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(db.url!);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    let stalled: Spawned | undefined;
    try {
      // One pool connection: each one cut costs a deadline (idle ones are found by keepalive, which a live proxy answers).
      const started = await startPublisher(viaProxy.toString(), { DATABASE_POOL_SIZE: "1" });
      stalled = started.child;
      // Leading (its LISTEN connection open, polling): an update reaches the feed.
      const [first] = await insertUpdates(db, [{ chainId: 1, betId: "30", player: wallet(3) }]);
      await eventually(async () => (await started.publishedSeq()) === Number(first), 10_000, "an update published before the cut");
      const before = await started.publishedSeq();
      proxy.cut();
      // Written once the path is cut: only a publisher that gave its dead connections up sends it.
      const seqs = await insertUpdates(db, [{ chainId: 1, betId: "3", player: wallet(3) }]);
      expect(seqs.at(-1)!).toBeGreaterThan(BigInt(before));
      const failed = await stalled.waitForJson<{ err?: unknown }>(
        (line) => line.msg === "publisher failed; standing down",
        15_000,
        "the publisher's poll given up on a dead connection (it waits for an answer without a deadline)",
      );
      expect(JSON.stringify(failed.err)).toMatch(/timeout/i);
      await eventually(async () => (await started.publishedSeq()) >= Number(seqs.at(-1)), 20_000, "the update written after the cut published");
    } finally {
      await stalled?.stop();
      await proxy.close();
    }
  }, 60_000);
});
