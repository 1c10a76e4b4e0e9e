// `npm start` as a child process, the way a new user runs it: a fresh data directory, no database
// server, PORT=0. Resolves once the service logs that it is ready; `stop()` ends the whole process
// group (anvil included) and removes the data directory.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RunningService {
  /** `http://127.0.0.1:<port>`: GraphQL at /graphql, Socket.IO at /socket.io, the live page at /. */
  url: string;
  /** The demo chain's JSON-RPC URL. */
  rpcUrl: string;
  stop(): Promise<void>;
}

export async function startService(options: { env?: Record<string, string>; readyTimeoutMs?: number } = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), "start-"));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", DATABASE_URL: "", REDIS_URL: "", NODE_ENV: "development", ...options.env },
    stdio: ["ignore", "pipe", "inherit"],
    // Its own process group, so stop() reaches anvil and every other grandchild.
    detached: true,
  });
  const stop = async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const { url, rpcUrl } = await new Promise<{ url: string; rpcUrl: string }>((resolve, reject) => {
      const timeoutMs = options.readyTimeoutMs ?? 60_000;
      const timer = setTimeout(() => reject(new Error(`npm start was not ready within ${timeoutMs / 1000} s`)), timeoutMs);
      let rpc = "";
      let buffer = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          let record: { msg?: string; rpcUrl?: string; graphql?: string };
          try {
            record = JSON.parse(line) as typeof record;
          } catch {
            continue;
          }
          if (record.rpcUrl) rpc = record.rpcUrl;
          if (record.msg === "Public Bet Results API ready" && record.graphql) {
            clearTimeout(timer);
            resolve({ url: record.graphql.replace(/\/graphql$/, ""), rpcUrl: rpc });
          }
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited with ${code}`));
      });
    });
    return { url, rpcUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
