import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resumingClient, type ResumingClient } from "../test/realtime.ts";
import { spawnChild, spawnTypeScript } from "../test/spawn.ts";

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

/** True while any process of the group `pgid` still exists (signal 0 probes without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

// Ctrl-C in a terminal is SIGINT to the whole foreground process group: npm, the node process it
// starts, the local anvil (a Node wrapper and its binary) all get it at once. Signalling only the
// node process (as above) cannot see children that die first or stay behind.
describe("npm start on Ctrl-C (SIGINT to its process group, as a terminal sends it)", () => {
  it("logs its shutdown and the whole process tree exits within 15 s", async () => {
    const dataDir = join(dir, "ctrl-c");
    const npm = spawnChild({
      command: "npm",
      args: ["start", "--silent"],
      group: true,
      // Each local chain's group, so a failing test leaves none behind (test/spawn.ts).
      announcedGroups: "anvilPid",
      name: "npm start",
      env: {
        DATA_DIR: dataDir,
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: "",
        REDIS_URL: "",
        NETWORKS_CONFIG: "",
      },
    });
    let page: ResumingClient | undefined;
    try {
      const chain = await npm.waitForJson<{ rpcUrl: string; anvilPid: number }>((line) => typeof line.rpcUrl === "string", 60_000, "local chain deployed");
      const ready = await npm.waitForJson<{ socketio: string }>((line) => line.msg === "Public Bet Results API ready", 60_000, "ready");
      expect(await answers(chain.rpcUrl)).toBe(true);
      // Ctrl-C must not reach the chain: it would die before the simulator and the indexer using
      // it have stopped (they then wait on it for minutes). It stops last, by the service's hand.
      expect(execFileSync("ps", ["-o", "pgid=", "-p", String(chain.anvilPid)], { encoding: "utf8" }).trim()).not.toBe(String(npm.pid));
      // The live page open in a browser: a Socket.IO client that reconnects (stock settings).
      page = await resumingClient(new URL(ready.socketio).origin, { path: "/socket.io" });
      const signalled = performance.now();
      process.kill(-npm.pid, "SIGINT");
      await npm.waitForJson((line) => line.msg === "shutting down", 5_000, "shutting down");
      // The whole group, not only npm (it may exit while its children still run), and the local
      // chain's own group (it is kept out of the terminal's so it stops after what uses it).
      for (;;) {
        if (!groupAlive(npm.pid) && !groupAlive(chain.anvilPid)) break;
        if (performance.now() - signalled > 15_000) {
          throw new Error(`process group ${npm.pid} still running 15 s after SIGINT; last log lines: ${npm.lines.slice(-8).join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await npm.exited;
      expect(await answers(chain.rpcUrl)).toBe(false);
      const messages = npm.json.map((line) => line.msg);
      expect(messages).toContain("shutting down");
      expect(messages.indexOf("shutdown failed")).toBe(-1);
    } finally {
      page?.socket.close();
      await npm.stop({ signal: "SIGKILL" });
    }
  }, 120_000);
});

describe("npm start on SIGTERM", () => {
  it("shuts down completely: exit 0, and its local chain stopped", async () => {
    const child = spawnTypeScript("bin/start.ts", {
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
      // Its group and its chains' groups: a failing test leaves none of them behind (test/spawn.ts).
      group: true,
      announcedGroups: "anvilPid",
    });
    try {
      const chain = await child.waitForJson<{ rpcUrl: string }>((line) => typeof line.rpcUrl === "string", 45_000, "local chain deployed");
      await child.waitForJson((line) => line.msg === "Public Bet Results API ready", 45_000, "ready");
      expect(await answers(chain.rpcUrl)).toBe(true);
      // The node process alone (not its group): the service stops its children itself.
      process.kill(child.pid, "SIGTERM");
      const ended = await Promise.race([child.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 20_000).unref())]);
      expect(ended).toEqual({ code: 0, signal: null });
      expect(await answers(chain.rpcUrl)).toBe(false);
    } finally {
      await child.stop({ signal: "SIGKILL" });
    }
  }, 90_000);
});
