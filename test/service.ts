// `npm start` as a child process, the way a new user runs it: a fresh data directory, no database
// server, PORT=0. Resolves once the service logs that it is ready; `stop()` ends the whole process
// group (anvil included) and removes the data directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnTypeScript } from "./spawn.ts";

export interface RunningService {
  /** `http://127.0.0.1:<port>`: GraphQL at /graphql, Socket.IO at /socket.io, the live page at /. */
  url: string;
  /** The demo chain's JSON-RPC URL (31337, whose verifier is the real one). */
  rpcUrl: string;
  stop(): Promise<void>;
}

export async function startService(options: { env?: Record<string, string>; readyTimeoutMs?: number } = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), "start-"));
  const child = spawnTypeScript("bin/start.ts", {
    env: { DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", DATABASE_URL: "", REDIS_URL: "", NODE_ENV: "development", ...options.env },
    stderr: "inherit",
    // Its own process group, so stop() reaches anvil and every other grandchild.
    group: true,
    // Each local chain runs in a group of its own: stop() ends those too if the service did not.
    announcedGroups: "anvilPid",
  });
  const stop = async () => {
    await child.stop({ graceMs: 15_000 });
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // Two demo chains (anvil, deployment, simulator each) come up before the API on a shared machine.
    const timeoutMs = options.readyTimeoutMs ?? 90_000;
    const ready = await child.waitForJson<{ graphql: string }>(
      (line) => line.msg === "Public Bet Results API ready" && typeof line.graphql === "string",
      timeoutMs,
      "npm start ready",
    );
    // The honest demo chain's (31337), not the permissive one's (1337).
    const rpcUrl = child.json.find((line) => typeof line.rpcUrl === "string" && line.chainId === 31337)?.rpcUrl;
    return { url: ready.graphql.replace(/\/graphql$/, ""), rpcUrl: typeof rpcUrl === "string" ? rpcUrl : "", stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
