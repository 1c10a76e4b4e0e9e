import { once } from "node:events";
import { createConnection } from "node:net";
import { freePort } from "./private-postgres.ts";
import { spawnChild, type Spawned } from "./spawn.ts";

// A redis-server of the test's own on a free loopback port (no persistence), so a fault test can
// stop, restart or freeze it without touching the shared one. Stopped by its pid only.

export interface PrivateRedis {
  url: string;
  /** The redis-server's pid while it runs (its memory and CPU can be read from /proc). */
  pid(): number | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its socket but answers nothing, like a hung Redis. */
  freeze(): void;
  thaw(): void;
}

async function accepting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const socket = createConnection({ host: "127.0.0.1", port });
    try {
      await once(socket, "connect");
      socket.destroy();
      return;
    } catch (error) {
      socket.destroy();
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** `args`: more redis-server options, e.g. `["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]`. */
export async function createPrivateRedis(options: { args?: string[] } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  let child: Spawned | undefined;
  const server: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    pid: () => child?.pid,
    async start() {
      child = spawnChild({
        command: "redis-server",
        args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...(options.args ?? [])],
        stdout: "ignore",
      });
      await accepting(port, 10_000);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running?.running()) return;
      running.signal("SIGCONT");
      await running.stop({ signal: "SIGKILL" });
    },
    freeze() {
      child?.signal("SIGSTOP");
    },
    thaw() {
      child?.signal("SIGCONT");
    },
  };
  await server.start();
  return server;
}
