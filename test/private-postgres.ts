import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { Service } from "./services.ts";

// A PostgreSQL server of the test's own (initdb in a temp dir, a free loopback port), so a fault
// test can stop and start it without touching the shared server. Runs as the `postgres` OS user
// when the tests run as root (PostgreSQL refuses root).

/** PostgreSQL's server binaries: where `pg_config --bindir` says, under /usr/lib/postgresql/<version>/bin (newest first), or on PATH. */
function pgBin(): string | undefined {
  const hasServer = (dir: string) => existsSync(join(dir, "pg_ctl")) && existsSync(join(dir, "initdb"));
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
  } catch {
    // no pg_config: the other places
  }
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(root, v, "bin")));
  }
  candidates.push(...(process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""));
  return candidates.find(hasServer);
}

/** Where tests look for the binaries, for skip messages. */
export const PRIVATE_POSTGRES_INSTALL = "apt-get install -y postgresql (pg_ctl and initdb via pg_config --bindir, /usr/lib/postgresql/*/bin or PATH)";

export const privatePostgresAvailable = pgBin() !== undefined;

/** For describeWith (test/services.ts): the server binaries a private PostgreSQL needs (initdb, pg_ctl). */
export const privatePostgresServer: Service = {
  missing: privatePostgresAvailable ? undefined : "no PostgreSQL server binaries",
  install: PRIVATE_POSTGRES_INSTALL,
};

/** A PostgreSQL client or server program (`psql`, `pg_dump`, …) of the newest installed version. */
export function postgresProgram(tool: string): string {
  const bin = pgBin();
  if (!bin) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  return join(bin, tool);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The pid of the postmaster of the server in `data` (its postmaster.pid), if it runs. */
export function postmasterPid(data: string): number | undefined {
  const file = join(data, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** A process and its descendants (a postmaster's backends, walreceiver, …), by the parent pids in /proc. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so parse after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, parent] of parents) if (parent === found[i]) found.push(pid);
  return found;
}

/**
 * Freezes (SIGSTOP) or thaws (SIGCONT) the postmaster of the server in `data` and every process
 * under it: a stalled server that keeps its sockets open (the kernel still accepts and acknowledges).
 */
export function freezeServer(data: string, name: string, frozen: boolean): void {
  const pid = postmasterPid(data);
  if (pid === undefined) throw new Error(`${name} is not running`);
  for (const member of processTree(pid)) {
    try {
      process.kill(member, frozen ? "SIGSTOP" : "SIGCONT");
    } catch (error) {
      // A backend that exited between the /proc walk and the signal has nothing to stop or resume;
      // the postmaster itself gone while freezing is a failure.
      const gone = (error as NodeJS.ErrnoException).code === "ESRCH";
      if (!gone || (member === pid && frozen)) throw error;
    }
  }
}

export interface PrivatePostgres {
  url: string;
  start(): void;
  stop(): void;
  /** Freezes or thaws the server (freezeServer): a stalled database that keeps its connections. */
  freeze(frozen: boolean): void;
  destroy(): void;
}

export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = pgBin();
  if (!bin) throw new Error(`no PostgreSQL server binaries (pg_ctl, initdb) found: ${PRIVATE_POSTGRES_INSTALL}`);
  const asPostgres = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
  const run = (tool: string, ...args: string[]) => {
    const [command, ...rest] = [...asPostgres, join(bin, tool), ...args];
    execFileSync(command!, rest, { stdio: "ignore", timeout: 60_000 });
  };
  const dir = mkdtempSync(join(tmpdir(), "pg-private-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const port = await freePort();
  if (asPostgres.length) execFileSync("chown", ["postgres", dir]);
  run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync");
  const server = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start: () =>
      run("pg_ctl", "-D", data, "-w", "-t", "30", "-l", join(dir, "log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "start"),
    stop: () => run("pg_ctl", "-D", data, "-w", "-t", "30", "-m", "fast", "stop"),
    freeze: (frozen: boolean) => freezeServer(data, "the private PostgreSQL", frozen),
    destroy: () => {
      try {
        freezeServer(data, "the private PostgreSQL", false);
      } catch {
        // not running
      }
      try {
        server.stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}
