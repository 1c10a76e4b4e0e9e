import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnTypeScript } from "../test/spawn.ts";

// A real network configured without its verification key would be served and judged with the
// committed DEV key, whose setup secret is public: `npm start` refuses it, quickly.

const dir = mkdtempSync(join(tmpdir(), "start-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm start with NETWORKS_CONFIG", () => {
  it("exits non-zero within seconds, naming verificationKeyPath, for chain 8453 without a key", async () => {
    const file = join(dir, "networks.json");
    writeFileSync(
      file,
      JSON.stringify({
        networks: [
          {
            chainId: 8453,
            name: "base",
            rpc: { http: "http://127.0.0.1:9" },
            confirmations: 10,
            contracts: {
              BetVault: { address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", deployBlock: "1" },
              Groth16Verifier: { address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512", deployBlock: "1" },
            },
          },
        ],
      }),
    );
    const started = Date.now();
    const child = spawnTypeScript("bin/start.ts", {
      env: {
        NETWORKS_CONFIG: file,
        DATA_DIR: join(dir, "data"),
        PORT: "0",
        DATABASE_URL: "",
        REDIS_URL: "",
        NODE_ENV: "production",
        CURSOR_SECRET: "start-keys test cursor secret",
      },
    });
    const { code } = await Promise.race([
      child.closed,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("npm start still running after 20 s")), 20_000)),
    ]).finally(() => child.stop());
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(`${child.stdout()}\n${child.stderr()}`).toMatch(/base \(chain 8453\).*verificationKeyPath/);
  });
});
