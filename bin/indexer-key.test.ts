// The start-up key check as wired: `bin/indexer.ts` on a non-development chain (5) whose deployed
// Groth16Verifier holds the real key, configured with that key but one constant changed, refuses to
// start with an error naming the verifier and the key file, exits 2 (an operator must look), and
// leaves every table of its database empty. The same process with the right key registers the
// network (rows written): the emptiness is the check's doing, not the harness's.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../core/db.ts";
import { DEFAULT_VERIFICATION_KEY_PATH, type NetworkConfig } from "../indexer/config.ts";
import { networksFileJson, startTestChain, type TestChain } from "../test/chain.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";

const dir = mkdtempSync(join(tmpdir(), "indexer-key-"));
const chains: TestChain[] = [];

beforeAll(async () => {
  // Two non-development chains, each with BetVault on the real (DEV-key) Groth16Verifier.
  chains.push(await startTestChain({ chainId: 5 }), await startTestChain({ chainId: 10 }));
}, 120_000);
afterAll(async () => {
  await Promise.all(chains.map((c) => c.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** The real key with δ's first coordinate moved by one: a key the deployed verifier does not hold. */
function wrongKeyFile(): string {
  const key = JSON.parse(readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8")) as { vk_delta_2: string[][] };
  const x = key.vk_delta_2[0] as string[];
  x[0] = (BigInt(x[0] as string) + 1n).toString();
  const path = join(dir, "wrong-key.json");
  writeFileSync(path, JSON.stringify(key));
  return path;
}

function networkOf(chain: TestChain, verificationKeyPath: string): NetworkConfig {
  return chain.network({ rpc: { http: chain.anvil.rpcUrl }, verificationKeyPath });
}

/** A networks file of several networks (networksFileJson writes one). */
function networksFile(name: string, networks: NetworkConfig[]): string {
  const entries = networks.map((n) => (JSON.parse(networksFileJson(n)) as { networks: unknown[] }).networks[0]);
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ networks: entries }));
  return path;
}

function startIndexer(networksConfig: string, dataDir: string): Spawned {
  return spawnTypeScript("bin/indexer.ts", {
    env: {
      NETWORKS_CONFIG: networksConfig,
      DATA_DIR: dataDir,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      METRICS_PORT: undefined,
      NODE_ENV: "production",
      LOG_LEVEL: "info",
      PROOF_VERIFY_WORKERS: "0",
    },
  });
}

/** "running" once the indexer says so, or its exit: whichever comes first. */
async function outcome(child: Spawned): Promise<"running" | { code: number | null }> {
  const running = child.waitForJson((line) => line.msg === "indexer running", 60_000, "indexer running").then(() => "running" as const);
  const exited = child.closed.then(({ code }) => ({ code }));
  return Promise.race([running.catch(() => exited), exited]);
}

/** Rows in every table of the PGlite database in `dataDir` (the migrations' own table aside). */
async function rowCounts(dataDir: string): Promise<Record<string, number>> {
  const db = await openDatabase({ dataDir, migrate: false });
  try {
    const tables = await db.prisma.$queryRawUnsafe<{ name: string }[]>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'",
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables) {
      const [row] = await db.prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*)::bigint AS n FROM "${name}"`);
      counts[name] = Number(row?.n ?? -1);
    }
    return counts;
  } finally {
    await db.close();
  }
}

describe("bin/indexer.ts on a non-development chain", () => {
  it("refuses a key the deployed verifier does not hold: exits 2 naming both, and writes nothing", async () => {
    const [chain] = chains as [TestChain];
    const keyPath = wrongKeyFile();
    const dataDir = join(dir, "wrong");
    const child = startIndexer(networksFile("wrong", [networkOf(chain, keyPath)]), dataDir);
    try {
      expect(await outcome(child)).toEqual({ code: 2 });
    } finally {
      await child.stop();
    }
    const fatal = child.json.find((line) => line.msg === "indexer failed to start") as { err?: { message?: string }; code?: string } | undefined;
    expect(fatal?.code).toBe("CONFIG_INVALID");
    expect(fatal?.err?.message).toMatch(
      new RegExp(
        `Groth16Verifier ${chain.sys.verifier} of network localnet-5 \\(chain 5\\) does not hold the configured verification key \\(1 of 24 constants differ\\).*verificationKeyPath ${keyPath}`,
        "i",
      ),
    );
    const counts = await rowCounts(dataDir);
    expect(Object.keys(counts)).toEqual(expect.arrayContaining(["Network", "Contract", "IndexingCursor", "Bet", "BetResult", "BetUpdate"]));
    expect(Object.entries(counts).filter(([, n]) => n !== 0)).toEqual([]);
  }, 90_000);

  it("checks every network's key before registering any: a good network listed first writes nothing either", async () => {
    const [bad, good] = chains as [TestChain, TestChain];
    const dataDir = join(dir, "mixed");
    const child = startIndexer(networksFile("mixed", [networkOf(good, DEFAULT_VERIFICATION_KEY_PATH), networkOf(bad, wrongKeyFile())]), dataDir);
    try {
      expect(await outcome(child)).toEqual({ code: 2 });
    } finally {
      await child.stop();
    }
    expect(Object.entries(await rowCounts(dataDir)).filter(([, n]) => n !== 0)).toEqual([]);
  }, 90_000);

  it("with the key the verifier holds, starts and registers the network (the row count above can see rows)", async () => {
    const [chain] = chains as [TestChain];
    const dataDir = join(dir, "right");
    const child = startIndexer(networksFile("right", [networkOf(chain, DEFAULT_VERIFICATION_KEY_PATH)]), dataDir);
    try {
      expect(await outcome(child)).toBe("running");
      expect(child.json.some((line) => line.msg === "the deployed verifier holds the configured verification key")).toBe(true);
    } finally {
      await child.stop();
    }
    const counts = await rowCounts(dataDir);
    expect(counts.Network).toBe(1);
    expect(counts.IndexingCursor).toBe(1);
  }, 90_000);
});
