// The client package against a realtime node that refuses its firehose subscription (the node's
// bound or the address's share, realtime/firehose.ts): the feed waits the `retryAfterSeconds` the
// refusal names before it tries again, and waitForBet still answers through GraphQL while its feed
// cannot get in. The node is real; the GraphQL client is a stand-in that knows the bet (what the
// API would answer is not what these tests are about, when and whether it is asked is).
import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { testRealtimeSettings } from "../test/config.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { createNetworks } from "../test/outbox.ts";
import { connectClient, type TestClient } from "../test/realtime.ts";
import type { GraphQLClient } from "./graphql.ts";
import { openBetsFeed, type BetsFeed, type FeedStatus } from "./realtime.ts";
import { waitForBet, type WaitedBet } from "./wait-for-bet.ts";

const TX = `0x${"ab".repeat(32)}` as const;
let db: TestDatabase;
let server: http.Server;
let running: RunningRealtime;
let url: string;
let holder: TestClient;
const feeds: BetsFeed[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createNetworks(db, [1]);
  server = http.createServer();
  // One firehose per address: this process's address (127.0.0.1) holds it through `holder`.
  running = await startRealtime(server, {
    db,
    logger: silentLogger(),
    settings: testRealtimeSettings({ REALTIME_PATH: "/ws", REALTIME_MAX_FIREHOSE_PER_ADDRESS: "1" }),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  holder = await connectClient(url, "/ws");
  const held = await holder.subscribe({ all: true });
  if ("error" in held) throw new Error(`the holder's firehose was refused: ${held.error.message}`);
});
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
});
afterAll(async () => {
  holder?.close();
  await running?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
});

describe("a firehose refused by the node", () => {
  it("the feed waits the refusal's retryAfterSeconds before it connects again", async () => {
    const statuses: FeedStatus[] = [];
    const feed = openBetsFeed({
      urls: [url],
      path: "/ws",
      subscription: { chainIds: [1] },
      reconnectDelayMs: { min: 50, max: 500 }, // without the hint: five or more attempts in 3 s
      onUpdate: () => {},
      onStatus: (status) => statuses.push(status),
    });
    feeds.push(feed);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Refused RATE_LIMITED with retryAfterSeconds 30: one attempt, then the wait.
    expect(statuses.filter((s) => s.state === "reconnecting")).toHaveLength(1);
    expect(statuses.filter((s) => s.state === "connecting")).toHaveLength(1);
    expect(statuses.some((s) => s.state === "live")).toBe(false);
  });

  it("waitForBet answers through GraphQL while its feed cannot get in", async () => {
    const bet = { betId: "7", placedTx: TX } as unknown as WaitedBet;
    let asked = 0;
    const api: GraphQLClient = {
      request: async <TResult>() => {
        asked++;
        return { betsByTransaction: [bet] } as TResult;
      },
    };
    const bets = await waitForBet(
      { api, feed: { urls: [url], path: "/ws", reconnectDelayMs: { min: 50, max: 500 } } },
      { chainId: 1, txHash: TX, timeoutMs: 10_000 },
    );
    expect(bets).toEqual([bet]);
    expect(asked).toBe(1);
  });
});
