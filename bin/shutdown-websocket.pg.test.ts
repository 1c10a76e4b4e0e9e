// SIGTERM on a realtime node with a WebSocket client that never answers the closing handshake (a
// phone gone off the network, a hung client): the node drains, then exits 0 soon after its grace
// period. Before, ws held such a connection 30 s and the node waited for it: its shutdown deadline
// (grace + 20 s, bin/wiring.ts) fired first, 'shutdown timed out', exit 1, databases never closed.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { freePort } from "../test/private-postgres.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const GRACE_MS = 1_000;
let db: TestDatabase;
let node: Spawned | undefined;
beforeAll(async () => {
  if (onPostgres) db = await createTestDatabase();
}, 60_000);
afterAll(async () => {
  await node?.stop({ signal: "SIGKILL" });
  await db?.close();
});

/** A WebSocket client of the Socket.IO namespace that reads everything and never answers a close frame. */
async function deafClient(port: number, path: string): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(
    `GET ${path}/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  let seen = "";
  await new Promise<void>((resolve) => {
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      if (seen.includes("101 Switching Protocols") && seen.includes('"sid"')) resolve();
    });
  });
  // "40": join the default namespace, in a masked text frame (a zero mask leaves the payload as is).
  socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0x34, 0x30]));
  await new Promise((resolve) => setTimeout(resolve, 300));
  return socket;
}

it.skipIf(!onPostgres)(
  "a realtime node exits 0 soon after its grace period while a client never answers the closing handshake",
  async () => {
    const port = await freePort();
    node = spawnTypeScript("bin/realtime.ts", {
      name: "realtime",
      env: {
        DATABASE_URL: db.url,
        DATABASE_MIGRATE_ON_START: "false",
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "info",
        NODE_ENV: "production",
        CURSOR_SECRET: "shutdown-websocket test cursor secret",
        REDIS_URL: undefined,
        METRICS_PORT: undefined,
        REALTIME_PUBLISHER: undefined,
        REALTIME_DRAIN_GRACE_MS: String(GRACE_MS),
      },
    });
    const ready = await node.waitForJson<{ path: string }>((line) => line.msg === "realtime node ready", 45_000, "ready");
    const client = await deafClient(port, ready.path);
    try {
      const signalled = performance.now();
      process.kill(node.pid, "SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const exit = await Promise.race([node.exited, new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), 35_000)))]);
      clearTimeout(timer);
      expect(exit, `log tail:\n${node.lines.slice(-6).join("\n")}`).toEqual({ code: 0, signal: null });
      expect(performance.now() - signalled).toBeLessThan(GRACE_MS + 5_000);
    } finally {
      client.destroy();
    }
  },
  90_000,
);
