import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

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

export interface PrivatePostgres {
  url: string;
  start(): void;
  stop(): void;
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
    destroy: () => {
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
