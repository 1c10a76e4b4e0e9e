import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnTsx } from "../test/spawn.ts";

// `npm start` on SIGTERM runs its own shutdown to the end (realtime, stack, indexer, the local
// chain, the database) and exits 0. Apollo Server's own signal handlers (one per server, four in
// this process) stopped their server and re-raised the signal, which killed the process midway:
// exit by SIGTERM, and the local anvil left running.

const dir = mkdtempSync(join(tmpdir(), "start-shutdown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function answers(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(2000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

describe("npm start on SIGTERM", () => {
  it("shuts down completely: exit 0, and its local chain stopped", async () => {
    const child = spawnTsx("bin/start.ts", {
      env: {
        DATA_DIR: join(dir, "data"),
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: "",
        REDIS_URL: "",
        NODE_ENV: "production",
        CURSOR_SECRET: "start-shutdown test cursor secret",
        LOG_LEVEL: "info",
        DEMO_MODE: "chain",
      },
    });
    try {
      const chain = await child.waitForJson<{ rpcUrl: string }>((line) => typeof line.rpcUrl === "string", 45_000, "local chain deployed");
      await child.waitForJson((line) => line.msg === "Public Bet Results API ready", 45_000, "ready");
      expect(await answers(chain.rpcUrl)).toBe(true);
      child.signal("SIGTERM");
      const ended = await Promise.race([child.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 20_000).unref())]);
      expect(ended).toEqual({ code: 0, signal: null });
      expect(await answers(chain.rpcUrl)).toBe(false);
    } finally {
      await child.stop({ signal: "SIGKILL" });
    }
  }, 90_000);
});
