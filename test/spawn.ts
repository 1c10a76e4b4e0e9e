// The one way tests and benchmarks start child processes: by pid (or as their own process group, to
// reach grandchildren), stdout read line by line, stderr collected, readiness awaited with a
// deadline, and stopped with a signal then SIGKILL after a grace period. Children still running
// when this process exits are killed, so nothing outlives the run that started it.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
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
  /**
   * A JSON stdout field whose number is the id of a process group the child starts and owns (e.g.
   * `anvilPid`: `npm start` keeps each local chain in a group of its own). stop() and this process's
   * exit kill what is left of those groups once the child itself has gone.
   */
  announcedGroups?: string;
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
  /**
   * Sends `signal` (default SIGTERM), then SIGKILL after the grace period; resolves once it has exited
   * (with `group`: once every process of its group and of its announced groups has, SIGKILLed after
   * the grace period, even when the leader had exited before). Idempotent.
   */
  stop(options?: StopOptions): Promise<void>;
}

const alive = new Set<Spawned>();
let exitHookInstalled = false;

/** Process groups started by children (their own with `group`, and the ones they announced), killed at exit if still there. */
const ownedGroups = new Set<number>();

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const spawned of alive) spawned.signal("SIGKILL");
    for (const pgid of ownedGroups) killGroup(pgid, "SIGKILL");
  });
}

/** True while any process of the group `pgid` exists (signal 0 probes without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/** Resolves once none of `groups` has a process left, polling (a group has no exit event). */
async function groupsGone(groups: Iterable<number>): Promise<void> {
  while ([...groups].some(groupAlive)) await new Promise((resolve) => setTimeout(resolve, 50));
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

  // Leader or not, the group is this child's until it is empty: npm may exit before its children.
  const groups = new Set<number>(options.group ? [pid] : []);
  for (const pgid of groups) ownedGroups.add(pgid);
  const lines: string[] = [];
  const json: Record<string, unknown>[] = [];
  const seen: { line: string; parsed: Record<string, unknown> | undefined }[] = [];
  const listeners = new Set<(line: string, parsed: Record<string, unknown> | undefined) => void>();
  if (child.stdout) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      const parsed = line.startsWith("{") ? tryParse(line) : undefined;
      if (parsed) json.push(parsed);
      const announced = options.announcedGroups === undefined ? undefined : parsed?.[options.announcedGroups];
      if (typeof announced === "number" && Number.isSafeInteger(announced) && announced > 0) {
        groups.add(announced);
        ownedGroups.add(announced);
      }
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
        // The child's own group is signalled even when its leader has exited; announced groups are
        // the child's to stop (it stops its chain last), so they are only killed if it did not.
        const own = options.group && groupAlive(pid);
        if (own) killGroup(pid, signal);
        else spawned.signal(signal);
        const kill = () => {
          spawned.signal("SIGKILL");
          for (const pgid of groups) killGroup(pgid, "SIGKILL");
        };
        const timer = setTimeout(kill, graceMs);
        await exited;
        await groupsGone(options.group ? [pid] : []);
        clearTimeout(timer);
        for (const pgid of groups) killGroup(pgid, "SIGKILL");
        await groupsGone(groups);
        for (const pgid of groups) ownedGroups.delete(pgid);
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
 * The flags a checkout of this repository runs its TypeScript with, as its `npm start` does: its
 * own bin/typescript.mjs, or tsx's loader in a checkout from before that file (a benchmark's
 * --baseline).
 */
export function typescriptFlagsOf(checkout: string): readonly string[] {
  const hook = join(checkout, "bin", "typescript.mjs");
  return existsSync(hook) ? ["--import", hook] : ["--import", "tsx"];
}

/** `node` flags that run this checkout's TypeScript as `npm start` does. */
export const TYPESCRIPT_FLAGS: readonly string[] = typescriptFlagsOf(ROOT);

/**
 * A TypeScript script of this repository run by this Node as `npm start` runs its entry point
 * (TYPESCRIPT_FLAGS: Node's own type stripping, or tsx's loader on a Node without it): one process,
 * whose pid is the script's (the tsx CLI would add a wrapper in between).
 */
export function spawnTypeScript(
  script: string,
  options: Omit<SpawnOptions, "command" | "args"> & { args?: string[]; nodeFlags?: string[]; typescriptFlags?: readonly string[] } = {},
): Spawned {
  const { args = [], nodeFlags = [], typescriptFlags = TYPESCRIPT_FLAGS, ...rest } = options;
  return spawnChild({ name: script, ...rest, args: [...typescriptFlags, ...nodeFlags, script, ...args] });
}
