// Process entry points as an operator starts them: bad configuration stops them at once with every
// problem named, and `bin/subgraph.ts <name>` serves the registry's subgraph of that name.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnTypeScript, TYPESCRIPT_FLAGS } from "../test/spawn.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `env` over an environment without any of our variables. */
function run(script: string, args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [...TYPESCRIPT_FLAGS, script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stderr: result.stderr };
}

describe("bin/indexer.ts", () => {
  it("exits 1 naming NETWORKS_CONFIG when it is not set", () => {
    const { code, stderr } = run("bin/indexer.ts", [], {});
    expect(code).toBe(1);
    expect(stderr).toMatch(/NETWORKS_CONFIG: required/);
  });

  it("exits 1 naming every invalid variable", () => {
    const { code, stderr } = run("bin/indexer.ts", [], {
      NETWORKS_CONFIG: "deploy/networks.json",
      DATABASE_URL: "mysql://x@y/z",
      METRICS_PORT: "metrics",
      LOG_LEVEL: "loud",
    });
    expect(code).toBe(1);
    for (const name of ["DATABASE_URL", "METRICS_PORT", "LOG_LEVEL"]) expect(stderr).toContain(`  ${name}: `);
  });
});

describe("bin/subgraph.ts", () => {
  it("exits 2 with its usage for a name the registry does not list", () => {
    const { code, stderr } = run("bin/subgraph.ts", ["health"], {});
    expect(code).toBe(2);
    expect(stderr).toContain("usage: tsx bin/subgraph.ts <networks|results|history>");
  });

  // A cursor key derived from a connection string (the shipped compose file's is public) lets
  // anyone mint cursors: in production the history subgraph has a configured secret or does not start.
  it("history, in production, exits 1 naming CURSOR_SECRET when it is not set", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "subgraph-"));
    dirs.push(dataDir);
    const { code, stderr } = run("bin/subgraph.ts", ["history"], { NODE_ENV: "production", DATA_DIR: dataDir, PORT: "0" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/CURSOR_SECRET.*NODE_ENV=production/);
  });

  it("serves the named subgraph on HOST:PORT and stops on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "subgraph-"));
    dirs.push(dataDir);
    const child = spawnTypeScript("bin/subgraph.ts", {
      args: ["results"],
      env: { PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info", DATABASE_URL: undefined, REDIS_URL: undefined, NODE_ENV: undefined, HOST: undefined },
    });
    try {
      const ready = await child.waitForJson<{ url: string }>(
        (line) => line.subgraph === "results" && typeof line.url === "string",
        30_000,
        "subgraph listening",
      );
      const response = await fetch(ready.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ _service { sdl } }" }),
      });
      const body = (await response.json()) as { data: { _service: { sdl: string } } };
      expect(body.data._service.sdl).toContain("betResults");
    } finally {
      child.signal("SIGTERM");
    }
    // Its own shutdown runs to the end and exits 0 within the bound (Apollo Server's signal
    // handlers, which re-raised the signal midway, are off: bin/start-shutdown.test.ts).
    const ended = await Promise.race([child.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 15_000).unref())]);
    await child.stop({ signal: "SIGKILL" });
    expect(ended).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe("bin/start.ts", () => {
  it("in production, exits 1 naming CURSOR_SECRET before starting anything when it is not set", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "start-"));
    dirs.push(dataDir);
    const { code, stderr } = run("bin/start.ts", [], { NODE_ENV: "production", DATA_DIR: dataDir, PORT: "0", DEMO_MODE: "none" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/CURSOR_SECRET.*NODE_ENV=production/);
  });
});
