/**
 * Starts a local anvil (node_modules/.bin/anvil from @foundry-rs/anvil) on 127.0.0.1 and stops
 * exactly that child process, by its pid.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const anvilBin = resolve(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "anvil");

export interface AnvilOptions {
  /** TCP port; 0 or omitted: a free port chosen by the OS (read back from anvil's banner). */
  port?: number;
  /** Interval mining in seconds; omitted: automine (one block per transaction). */
  blockTime?: number;
  /** Default 31337. */
  chainId?: number;
  /** Default 10 funded dev accounts (anvil's well-known mnemonic). */
  accounts?: number;
  /** Milliseconds to wait for readiness. Default 15 000. */
  startTimeoutMs?: number;
  /**
   * Its own process group: a terminal's Ctrl-C (SIGINT to the whole foreground group) does not
   * reach it, so the services using it stop first and its owner stops it last (`npm start`). Stop
   * and the exit hook then signal the group (the @foundry-rs wrapper and the anvil binary). Default
   * false: it shares its parent's group (test runs, where Ctrl-C ends everything at once).
   */
  ownProcessGroup?: boolean;
}

export interface AnvilInstance {
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  port: number;
  pid: number;
  /** Stops this anvil (SIGTERM, then SIGKILL after 3 s); idempotent. */
  stop(): Promise<void>;
}

/** Running anvils, each with the target its signals go to: its pid, or its process group (negative). */
const running = new Map<ChildProcess, number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Do not leave our own children behind when the parent process exits without calling stop().
  process.on("exit", () => {
    for (const [child, target] of running) {
      if (child.exitCode === null) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  });
}

export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  if (!existsSync(anvilBin)) throw new Error(`anvil binary not found at ${anvilBin}`);
  const chainId = options.chainId ?? 31337;
  const args = ["--host", "127.0.0.1", "--port", String(options.port ?? 0), "--chain-id", String(chainId), "--accounts", String(options.accounts ?? 10)];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));

  const child = spawn(anvilBin, args, { stdio: ["ignore", "pipe", "pipe"], detached: options.ownProcessGroup ?? false });
  const pid = child.pid;
  if (pid === undefined) throw new Error("failed to spawn anvil");
  const target = options.ownProcessGroup ? -pid : pid;
  running.set(child, target);
  installExitHook();

  const exited = new Promise<void>((resolveExit) => {
    child.once("exit", () => {
      running.delete(child);
      resolveExit();
    });
  });

  let stderrTail = "";
  child.on("error", (error) => {
    stderrTail += `\nspawn error: ${error.message}`;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-2000);
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(target, "SIGTERM");
    const timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(target, "SIGKILL");
    }, 3000);
    await exited;
    clearTimeout(timer);
    // The wrapper exits as soon as it has forwarded the signal: wait for the binary too.
    if (options.ownProcessGroup) await groupGone(pid, 3000);
  };

  // anvil logs every RPC request to stdout: read its banner for the port, then keep draining.
  const port = await new Promise<number>((resolvePort, reject) => {
    let buffer = "";
    const timer = setTimeout(() => {
      reject(new Error(`anvil not ready after ${options.startTimeoutMs ?? 15_000} ms: ${stderrTail}`));
    }, options.startTimeoutMs ?? 15_000);
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString("utf8");
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(buffer);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolvePort(Number(match[1]));
      } else if (buffer.length > 100_000) {
        buffer = buffer.slice(-1000);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited before ready (code ${code}, signal ${signal}): ${stderrTail}`));
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`anvil failed to start: ${error.message}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  child.stdout?.on("data", () => undefined);

  const rpcUrl = `http://127.0.0.1:${port}`;
  await waitForRpc(rpcUrl, options.startTimeoutMs ?? 15_000).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { rpcUrl, wsUrl: `ws://127.0.0.1:${port}`, chainId, port, pid, stop };
}

async function waitForRpc(rpcUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`anvil at ${rpcUrl} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once no process of group `pgid` remains; SIGKILLs the group after `graceMs`. */
async function groupGone(pgid: number, graceMs: number): Promise<void> {
  const deadline = performance.now() + graceMs;
  for (;;) {
    try {
      process.kill(-pgid, performance.now() > deadline ? "SIGKILL" : 0);
    } catch {
      return; // ESRCH: none left
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
