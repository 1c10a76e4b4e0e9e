import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createConnection } from "node:net";
import { freePort } from "./private-postgres.ts";

// A redis-server of the test's own on a free loopback port (no persistence), so a fault test can
// stop, restart or freeze it without touching the shared one. Stopped by its pid only.

export interface PrivateRedis {
  url: string;
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

export async function createPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
      await accepting(port, 10_000);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running?.pid || running.exitCode !== null) return;
      const exited = once(running, "exit");
      process.kill(running.pid, "SIGCONT");
      process.kill(running.pid, "SIGKILL");
      await exited;
    },
    freeze() {
      if (child?.pid) process.kill(child.pid, "SIGSTOP");
    },
    thaw() {
      if (child?.pid) process.kill(child.pid, "SIGCONT");
    },
  };
  await server.start();
  return server;
}
