// Mounted on someone else's HTTP server at /socket.io, as the gateway and `npm start` do: with no
// REDIS_URL it is the embedded form (in-memory adapter, publisher in the process, sharing the
// app's Database — PGlite's single connection included).
import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createTestDatabase } from "../test/db.ts";
import { REALTIME_PATH } from "./events.ts";
import { startRealtime } from "./runtime.ts";
import { createNetworks, insertUpdates, wallet } from "../test/outbox.ts";
import { connectClient, seqs } from "../test/realtime.ts";
import { testRealtimeSettings } from "../test/config.ts";
import { createPrivateRedis } from "../test/private-redis.ts";
import { privateRedisServer, skipWithout } from "../test/services.ts";
import { createRedisClient } from "../core/redis.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe("startRealtime", () => {
  it("serves Socket.IO at /socket.io beside the server's own routes, with an in-process publisher", async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.close());
    await createNetworks(db, [1]);
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === "/health" ? 200 : 404, { "content-type": "application/json" }).end("{}");
    });
    const running = await startRealtime(server, {
      db,
      logger: silentLogger(),
      settings: testRealtimeSettings({ REALTIME_POLL_INTERVAL_MS: "200" }, { path: REALTIME_PATH.gateway }),
    });
    cleanups.push(() => running.stop());
    expect(running.publisher).toBeDefined();
    expect(running.realtime.path).toBe("/socket.io");
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    expect((await fetch(`${url}/health`)).status).toBe(200);
    const client = await connectClient(url, "/socket.io");
    cleanups.push(async () => client.close());
    await client.subscribe({ wallets: [wallet(1)] });
    const written = await insertUpdates(db, [
      { chainId: 1, betId: "1", player: wallet(1) },
      { chainId: 1, betId: "2", player: wallet(2) },
    ]);
    await client.until(() => client.updates.length === 1);
    expect(seqs(client.updates)).toEqual([written[0]]);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    // Stopping detaches Socket.IO and leaves the HTTP server to its owner.
    await running.stop();
    expect(server.listening).toBe(true);
  });

  it.skipIf(skipWithout(privateRedisServer))(
    "runs admission's cluster count on the node's command connection when given one (no connection of its own)",
    async () => {
      const db = await createTestDatabase();
      cleanups.push(() => db.close());
      const redis = await createPrivateRedis();
      cleanups.push(() => redis.stop());
      const commands = createRedisClient(redis.url, { logger: silentLogger(), role: "realtime:commands", maxRetriesPerRequest: 1 });
      cleanups.push(async () => commands.disconnect());
      const server = http.createServer();
      const running = await startRealtime(server, { db, logger: silentLogger(), settings: testRealtimeSettings(), redisUrl: redis.url, redis: commands });
      cleanups.push(() => running.stop());
      await commands.ping();
      const names: string[] = String(await commands.call("CLIENT", "LIST")).match(/ name=\S*/g) ?? [];
      expect(names.filter((name) => name === " name=realtime:commands")).toHaveLength(1);
      expect(names.filter((name) => name === " name=realtime:admission")).toHaveLength(0);
    },
  );
});
