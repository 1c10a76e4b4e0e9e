// A realtime node (bin/realtime.ts, as an operator runs it) whose PostgreSQL freezes: it keeps its
// connections and never answers. A resume (`sinceSeq`) must be told SERVICE_UNAVAILABLE within the
// serving pools' deadline (bin/wiring.ts stalledServerTimeout), not held with its pool connection
// forever, and the node must serve resumes again once the server thaws, without a restart.
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { stalledServerTimeout } from "../bin/wiring.ts";
import { eventually } from "../test/eventually.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { createPrivatePostgres, privatePostgresServer, type PrivatePostgres } from "../test/private-postgres.ts";
import { describeWith, skipWithout } from "../test/services.ts";
import { connectClient, type TestClient } from "../test/realtime.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";
import { isErrorResponse, REALTIME_PATH, type Response, type SubscribedPayload } from "./events.ts";

const STATEMENT_TIMEOUT_MS = 1_000;
const CHAIN = 31337;
const PLAYER = wallet(1);
const UPDATES = 30;

let postgres: PrivatePostgres;
let db: Database;
let node: Spawned | undefined;
let url: string;

// Needs PostgreSQL's server binaries (a private server it can freeze): SKIPPED without them, except
// under CI (test/services.ts).
const skip = skipWithout(privatePostgresServer);

beforeAll(async () => {
  if (skip) return;
  postgres = await createPrivatePostgres();
  db = await openDatabase({ url: postgres.url, migrate: true, poolSize: 2 });
  await createNetworks(db, [CHAIN]);
  await insertUpdates(
    db,
    Array.from({ length: UPDATES }, (_, i) => ({ chainId: CHAIN, betId: String(i + 1), player: PLAYER })),
  );
  // No REDIS_URL: the in-memory adapter, and the node's own publisher (as a single node runs).
  node = spawnTypeScript("bin/realtime.ts", {
    env: {
      DATABASE_URL: postgres.url,
      DATABASE_MIGRATE_ON_START: "false",
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      NODE_ENV: "test",
      REDIS_URL: undefined,
    },
  });
  const ready = await node.waitForJson((line) => line.msg === "realtime node ready", 30_000, "realtime node ready");
  url = String(ready.url);
}, 120_000);
afterAll(async () => {
  await node?.stop({ graceMs: 3_000 });
  await db?.close();
  postgres?.destroy();
});

/** A resume of the player's updates from seq 0: its answer, and how long it took. */
async function resume(client: TestClient, timeoutMs: number): Promise<{ response: Response<SubscribedPayload>; elapsedMs: number }> {
  const started = performance.now();
  const response = await client.socket.timeout(timeoutMs).emitWithAck("bets:subscribe", { wallets: [PLAYER], sinceSeq: "0" });
  return { response, elapsedMs: performance.now() - started };
}

describeWith(privatePostgresServer, "a realtime node's PostgreSQL freezes", () => {
  it("tells a resume SERVICE_UNAVAILABLE within the stalled-server deadline, and replays again once it thaws", async () => {
    const config = loadConfig(["shared"], { DATABASE_URL: postgres.url, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    const deadlineMs = stalledServerTimeout(config)!;
    // The deadline holds each statement; a resume's first statement after the freeze fails it. The
    // allowance is for the answer to travel on a loaded test host, below a second deadline (the old
    // node never answered at all).
    const boundMs = deadlineMs + 5_000;

    const before = await connectClient(url, REALTIME_PATH.dedicated);
    const served = await resume(before, 20_000);
    expect(isErrorResponse(served.response)).toBe(false);
    await before.until(() => before.updates.length === UPDATES, 10_000, "the replay");
    before.close();

    const client = await connectClient(url, REALTIME_PATH.dedicated);
    postgres.freeze(true);
    try {
      // Not answered by the bound: the ack's own timeout rejects and the test fails (the old code).
      const stalled = await resume(client, boundMs);
      expect(stalled.response).toMatchObject({ error: { code: "SERVICE_UNAVAILABLE" } });
      expect(JSON.stringify(stalled.response)).not.toMatch(/timeout|127\.0\.0\.1|postgres/i);
      expect(stalled.elapsedMs).toBeLessThan(boundMs);
      // The socket is told too, not only the acknowledgement.
      expect(client.errors).toEqual([expect.objectContaining({ code: "SERVICE_UNAVAILABLE", event: "bets:subscribe" })]);
      expect(client.socket.connected).toBe(true);
    } finally {
      postgres.freeze(false);
    }

    // Thawed: the same socket resumes and gets every update, without restarting the node.
    await eventually(async () => !isErrorResponse((await resume(client, 20_000)).response), 30_000, "a resume served after the thaw", 250);
    await client.until(() => client.updates.length >= UPDATES, 10_000, "the replay after the thaw");
    expect(new Set(client.updates.map((update) => update.seq)).size).toBe(UPDATES);
    client.close();
  }, 120_000);
});
