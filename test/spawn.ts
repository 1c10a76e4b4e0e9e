// The one way tests and benchmarks start child processes: by pid (or as their own process group, to
// reach grandchildren), stdout read line by line, stderr collected, readiness awaited with a
// deadline, and stopped with a signal then SIGKILL after a grace period. Children still running
// when this process exits are killed, so nothing outlives the run that started it.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const STDERR_TAIL = 64 * 1024;

export interface SpawnOptions {
  /** The executable; default this Node (process.execPath). */
  command?: string;
  args?: string[];
  /** Added to this process's environment (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Default the repository root. */
  cwd?: string;
  /** Its own process group: signals reach the whole group (e.g. `npm start` and its anvil). */
  group?: boolean;
  /** "pipe" keeps stdin open (`child.stdin`); default "ignore". */
  stdin?: "pipe" | "ignore";
  /** "lines" (default) reads stdout line by line; "ignore" discards it; "inherit" passes it through. */
  stdout?: "lines" | "ignore" | "inherit";
  /** "collect" (default) keeps the tail for errors and `stderr()`; "inherit" passes it through. */
  stderr?: "collect" | "inherit";
  /** Names the child in errors; default the command and its first argument. */
  name?: string;
  /** Run as this user/group (a root test run starting a server that refuses root, e.g. PostgreSQL). */
  uid?: number;
  gid?: number;
}

export interface StopOptions {
  /** Default SIGTERM. */
  signal?: NodeJS.Signals;
  /** SIGKILL after this long (ms); default 3 000. */
  graceMs?: number;
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly name: string;
  /** Every stdout line so far ("lines" mode). */
  readonly lines: string[];
  /** Every stdout line so far that parsed as a JSON object (pino logs, ready lines). */
  readonly json: Record<string, unknown>[];
  /** Resolves on exit (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once it has exited and its output has been read to the end (never rejects). */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first stdout line (seen or to come) `accept` takes; rejects after `timeoutMs` or when the child exits first. */
  waitForLine(accept: (line: string) => boolean, timeoutMs?: number, what?: string): Promise<string>;
  /** The first JSON stdout line (seen or to come) `accept` takes; same deadline rules. */
  waitForJson<T = Record<string, unknown>>(accept: (line: Record<string, unknown>) => boolean, timeoutMs?: number, what?: string): Promise<T>;
  /** The last 64 KB of stderr ("collect" mode). */
  stderr(): string;
  /** All of stdout so far ("lines" mode). */
  stdout(): string;
  running(): boolean;
  /** Sends `signal` to the child (its group with `group`), if it still runs. */
  signal(signal: NodeJS.Signals): void;
  /** Sends `signal` (default SIGTERM), then SIGKILL after the grace period; resolves once it has exited. Idempotent. */
  stop(options?: StopOptions): Promise<void>;
}

const alive = new Set<Spawned>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const spawned of alive) spawned.signal("SIGKILL");
  });
}

export function spawnChild(options: SpawnOptions): Spawned {
  const command = options.command ?? process.execPath;
  const args = options.args ?? [];
  const name = options.name ?? [command === process.execPath ? "node" : command, ...args.filter((a) => !a.startsWith("-")).slice(0, 1)].join(" ");
  const stdoutMode = options.stdout ?? "lines";
  const stderrMode = options.stderr ?? "collect";
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: [options.stdin ?? "ignore", stdoutMode === "lines" ? "pipe" : stdoutMode, stderrMode === "collect" ? "pipe" : "inherit"],
    detached: options.group ?? false,
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn ${name}`);

  let errorText = "";
  child.on("error", (error) => (errorText = `${errorText}\nspawn error: ${error.message}`.slice(-STDERR_TAIL)));
  child.stderr?.on("data", (chunk: Buffer) => (errorText = (errorText + chunk.toString()).slice(-STDERR_TAIL)));

  const lines: string[] = [];
  const json: Record<string, unknown>[] = [];
  const seen: { line: string; parsed: Record<string, unknown> | undefined }[] = [];
  const listeners = new Set<(line: string, parsed: Record<string, unknown> | undefined) => void>();
  if (child.stdout) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      const parsed = line.startsWith("{") ? tryParse(line) : undefined;
      if (parsed) json.push(parsed);
      seen.push({ line, parsed });
      for (const listener of listeners) listener(line, parsed);
    });
  }

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = { code, signal };
      alive.delete(spawned);
      resolve(exitInfo);
    });
  });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const running = () => exitInfo === undefined && child.exitCode === null && child.signalCode === null;

  const waitFor = <T>(match: (line: string, parsed: Record<string, unknown> | undefined) => T | undefined, timeoutMs: number, what: string): Promise<T> => {
    for (const { line, parsed } of seen) {
      const found = match(line, parsed);
      if (found !== undefined) return Promise.resolve(found);
    }
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      const listener = (line: string, parsed: Record<string, unknown> | undefined) => {
        const found = match(line, parsed);
        if (found === undefined) return;
        done();
        resolve(found);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${name} (pid ${pid}) did not report ${what} within ${timeoutMs} ms; stderr: ${errorText.slice(-4000)}`));
      }, timeoutMs);
      listeners.add(listener);
      void exited.then((info) => {
        if (!listeners.has(listener)) return;
        done();
        reject(new Error(`${name} (pid ${pid}) exited (code ${info.code}, signal ${info.signal}) before reporting ${what}; stderr: ${errorText.slice(-4000)}`));
      });
    });
  };
  let stopping: Promise<void> | undefined;
  const spawned: Spawned = {
    child,
    pid,
    name,
    lines,
    json,
    exited,
    closed,
    waitForLine: (accept, timeoutMs = 20_000, what = "the expected line") => waitFor((line) => (accept(line) ? line : undefined), timeoutMs, what),
    waitForJson: <T>(accept: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000, what = "the expected JSON line") =>
      waitFor((_line, parsed) => (parsed && accept(parsed) ? (parsed as T) : undefined), timeoutMs, what),
    stderr: () => errorText,
    stdout: () => lines.join("\n"),
    running,
    signal(signal) {
      if (!running()) return;
      try {
        process.kill(options.group ? -pid : pid, signal);
      } catch {
        // already gone
      }
    },
    stop({ signal = "SIGTERM", graceMs = 3_000 } = {}) {
      stopping ??= (async () => {
        if (!running()) return;
        spawned.signal(signal);
        const timer = setTimeout(() => spawned.signal("SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  alive.add(spawned);
  installExitHook();
  return spawned;
}

function tryParse(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A TypeScript script of this repository run by this Node with tsx's loader (`node --import tsx`):
 * one process, whose pid is the script's (the tsx CLI would add a wrapper in between).
 */
export function spawnTsx(script: string, options: Omit<SpawnOptions, "command" | "args"> & { args?: string[]; nodeFlags?: string[] } = {}): Spawned {
  const { args = [], nodeFlags = [], ...rest } = options;
  return spawnChild({ name: script, ...rest, args: ["--import", "tsx", ...nodeFlags, script, ...args] });
}
