// The Ponder peer (issue 24 item 3) as the benchmark drives it: the fixture app in bench/ponder/
// (its own package.json pins ponder@1.0.0; installed there on first use, never a root dependency),
// started with `ponder start` in its own process, telemetry off, over one PostgreSQL database and
// schema, indexing a fixed block range of the benchmark's chain.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { spawnChild, type Spawned } from "../test/spawn.ts";

export const PONDER_DIR = fileURLToPath(new URL("./ponder/", import.meta.url));
const PONDER_BIN = `${PONDER_DIR}node_modules/ponder/dist/esm/bin/ponder.js`;
export const PONDER_SCHEMA = "ponder_bench";

/** The pinned version, installing the fixture's dependencies first when they are missing. */
export function ensurePonderInstalled(log: (line: string) => void): string {
  if (!existsSync(PONDER_BIN)) {
    log(`installing the Ponder fixture's dependencies in ${PONDER_DIR} (npm install, first use only)…`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: PONDER_DIR, stdio: "inherit" });
  }
  const { version } = JSON.parse(readFileSync(`${PONDER_DIR}node_modules/ponder/package.json`, "utf8")) as { version: string };
  return version;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface PonderRange {
  databaseUrl: string;
  rpcUrl: string;
  chainId: number;
  betVault: string;
  startBlock: bigint;
  endBlock: bigint;
}

export interface RunningPonder {
  child: Spawned;
  url: string;
  /** From spawn to the first 200 of /health: build, database set-up (indexing starts with the server). */
  startupMs: number;
  /** From the first 200 of /health to its "Completed historical indexing" log line. */
  backfillMs: number;
  /** What `cpuNow` counted over `backfillMs` (Ponder's process and its PostgreSQL backends). */
  backfillCpuMs: number;
}

/** Starts `ponder start` and resolves once it has indexed the whole range (rejects after `timeoutMs`). */
export async function startPonder(range: PonderRange, timeoutMs: number, cpuNow: (pid: number) => Promise<number>): Promise<RunningPonder> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  const child = spawnChild({
    command: process.execPath,
    args: [PONDER_BIN, "start", "--schema", PONDER_SCHEMA, "--port", String(port), "--hostname", "127.0.0.1", "--log-format", "json", "--log-level", "info"],
    cwd: PONDER_DIR,
    env: {
      PONDER_TELEMETRY_DISABLED: "true",
      DATABASE_URL: range.databaseUrl,
      DATABASE_PRIVATE_URL: undefined,
      PONDER_RPC_URL: range.rpcUrl,
      PONDER_CHAIN_ID: String(range.chainId),
      PONDER_BETVAULT: range.betVault,
      PONDER_START_BLOCK: String(range.startBlock),
      PONDER_END_BLOCK: String(range.endBlock),
    },
    name: "ponder start",
  });
  try {
    const done = child.waitForJson((line) => line.msg === "Completed historical indexing", timeoutMs, "Ponder's historical indexing");
    done.catch(() => undefined); // awaited below; a failure while waiting for /health must not surface twice
    let healthyAt: number | undefined;
    let healthyCpu = Number.NaN;
    while (healthyAt === undefined) {
      if (performance.now() - spawned > timeoutMs) throw new Error(`Ponder did not answer /health within ${timeoutMs} ms`);
      if (!child.running()) throw new Error(`Ponder exited: ${child.stderr().slice(-2000)}\n${child.stdout().slice(-2000)}`);
      const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) {
        healthyAt = performance.now();
        healthyCpu = await cpuNow(child.pid);
      } else await new Promise((r) => setTimeout(r, 20));
    }
    await done;
    const backfillMs = performance.now() - healthyAt;
    const backfillCpuMs = (await cpuNow(child.pid)) - healthyCpu;
    return { child, url, startupMs: healthyAt - spawned, backfillMs, backfillCpuMs };
  } catch (error) {
    await child.stop({ graceMs: 10_000 });
    throw new Error(
      `${(error as Error).message}\n--- ponder stdout (tail) ---\n${child.stdout().slice(-3000)}\n--- stderr ---\n${child.stderr().slice(-3000)}`,
    );
  }
}
