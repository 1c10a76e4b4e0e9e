// A PostgreSQL primary and streaming replicas of the test's own, in a temp dir on free loopback
// ports: initdb (wal_level=replica, trust, a replication role), pg_basebackup -R for the replica,
// both run by pg_ctl — as the `postgres` OS user when the tests run as root (PostgreSQL refuses
// root). `destroy()` stops each by the pid in its postmaster.pid and removes the directory.
import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, freezeServer, postmasterPid, PRIVATE_POSTGRES_INSTALL, postgresProgram, privatePostgresAvailable } from "./private-postgres.ts";
import type { Service } from "./services.ts";

/** For describeWith: the server binaries (initdb, pg_ctl, pg_basebackup). */
export const replicaService: Service = {
  missing:
    privatePostgresAvailable && existsSync(postgresProgramOrEmpty("pg_basebackup"))
      ? undefined
      : "no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)",
  install: PRIVATE_POSTGRES_INSTALL,
};

function postgresProgramOrEmpty(tool: string): string {
  try {
    return postgresProgram(tool);
  } catch {
    return "";
  }
}

export interface ClusterNode {
  url: string;
  port: number;
  /** Starts it (again) and waits until it accepts connections. */
  start(): void;
  /** Its server log so far: every statement, each line prefixed with the client's application_name and ": ". */
  log(): string;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) its postmaster and every process under it: a stalled server that keeps its sockets open. */
  freeze(frozen: boolean): void;
  /** Fast shutdown by the pid of its postmaster; waits until it is gone. No-op when not running. */
  stop(): Promise<void>;
}

export interface ReplicatedCluster {
  primary: ClusterNode;
  /** The first replica. */
  replica: ClusterNode;
  /** Every replica, in the order made. */
  replicas: ClusterNode[];
  destroy(): Promise<void>;
}

const asPostgres = () => (process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : []);

function run(tool: string, ...args: string[]): void {
  const [command, ...rest] = [...asPostgres(), postgresProgram(tool), ...args];
  try {
    execFileSync(command!, rest, { stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`${tool} failed: ${stderr.slice(-2_000)}`, { cause: error });
  }
}

function node(dir: string, name: string, port: number): ClusterNode {
  const data = join(dir, name);
  const pidOf = () => postmasterPid(data);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    log: () => {
      const file = join(dir, `${name}.log`);
      return existsSync(file) ? readFileSync(file, "utf8") : "";
    },
    start: () => run("pg_ctl", "-D", data, "-w", "-t", "60", "-l", join(dir, `${name}.log`), "-o", `-p ${port} -k ${dir}`, "start"),
    freeze: (frozen) => freezeServer(data, name, frozen),
    async stop() {
      const pid = pidOf();
      if (pid === undefined || !alive(pid)) return;
      process.kill(pid, "SIGINT"); // fast shutdown
      const deadline = Date.now() + 30_000;
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      if (alive(pid)) process.kill(pid, "SIGQUIT");
    },
  };
}

/** A primary and `replicas` streaming replicas of it (hot standbys, 1 by default), all running. */
export async function createReplicatedCluster(options: { replicas?: number } = {}): Promise<ReplicatedCluster> {
  const dir = mkdtempSync(join(tmpdir(), "pg-replicated-"));
  chmodSync(dir, 0o777);
  if (asPostgres().length) execFileSync("chown", ["postgres", dir]);
  const primary = node(dir, "primary", await freePort());
  const names = Array.from({ length: options.replicas ?? 1 }, (_, i) => (i === 0 ? "replica" : `replica${i + 1}`));
  const replicas: ClusterNode[] = [];
  for (const name of names) replicas.push(node(dir, name, await freePort()));
  const destroy = async () => {
    for (const replica of replicas) await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run("initdb", "-D", join(dir, "primary"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync");
    appendFileSync(
      join(dir, "primary", "postgresql.conf"),
      [
        "listen_addresses = '127.0.0.1'",
        "wal_level = replica",
        "max_wal_senders = 4",
        "hot_standby = on",
        "fsync = off",
        "synchronous_commit = off",
        // Which server ran a statement, for whom: the tests read it in the log.
        "log_statement = 'all'",
        "log_line_prefix = '%a: '",
        "",
      ].join("\n"),
    );
    appendFileSync(join(dir, "primary", "pg_hba.conf"), "host replication replicator 127.0.0.1/32 trust\n");
    primary.start();
    run("psql", "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-d", "postgres", "-c", "CREATE ROLE replicator WITH REPLICATION LOGIN");
    // -R writes standby.signal and primary_conninfo: the copy starts as a streaming replica.
    names.forEach((name, i) => {
      run("pg_basebackup", "-h", "127.0.0.1", "-p", String(primary.port), "-U", "replicator", "-D", join(dir, name), "-R", "-X", "stream", "--no-sync");
      replicas[i]!.start();
    });
  } catch (error) {
    await destroy();
    throw error;
  }
  return { primary, replica: replicas[0]!, replicas, destroy };
}
