// A settled proof is one the chain's verifier accepted (BetVault requires it). When such a proof
// fails under the served key, the key or the verifier is wrong, and that is said for the network,
// not only per bet: the cursor counts it (the gateway's /health shows a DEGRADED `verifier:<name>`
// check) and the indexer's metric `indexer_verifier_key_mismatch_total` rises. And a key file
// changed under a registered network re-indexes it: results checked under the old key are never
// served as verified under the new one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { createHealthMonitor } from "../gateway/health/report.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { DEFAULT_VERIFICATION_KEY_PATH } from "./config.ts";
import { createIndexer, type IndexerEvent } from "./indexer.ts";
import { createIndexerMetrics } from "./metrics.ts";

const lines: Record<string, unknown>[] = [];
const logger = createLogger({ level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
const dir = mkdtempSync(join(tmpdir(), "key-mismatch-"));
let chain: TestChain;
let db: TestDatabase;

beforeAll(async () => {
  chain = await startTestChain({ permissive: true });
  db = await createTestDatabase();
}, 120_000);
afterAll(async () => {
  await db?.close();
  await releaseProverResources();
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function health() {
  return createHealthMonitor({ db, version: "test", logger, subgraphUrls: () => ({}), maxLagBlocks: 1_000, maxStalenessSeconds: 3_600, cacheMs: 0 }).report();
}

/** `name{...labels} value` of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function verdicts(): Promise<Map<bigint, boolean>> {
  return new Map((await db.prisma.betResult.findMany()).map((r) => [BigInt(r.betId.toFixed(0)), r.verified]));
}

describe("a settled proof that fails under the served key", () => {
  let genuine: bigint;
  let tampered: bigint;

  it("degrades /health with a verifier check and counts in the indexer's metric; a genuine one does neither", async () => {
    const metrics = createIndexerMetrics({ defaultMetrics: false });
    const events: IndexerEvent[] = [];
    const indexer = createIndexer({
      db,
      logger,
      networks: [chain.network()],
      onEvent: (event) => {
        events.push(event);
        metrics.observe(event);
      },
    });
    try {
      await indexer.start();
      const { driver } = chain;
      await driver.ensureCommitments(2);
      await driver.place(0);
      await driver.place(1);
      [genuine, tampered] = (await driver.mine()).placed as [bigint, bigint];

      await driver.settle(genuine);
      await driver.mine();
      await indexer.synced();
      expect((await verdicts()).get(genuine)).toBe(true);
      const before = await health();
      expect(before.checks.filter((c) => c.name.startsWith("verifier:"))).toEqual([]);
      expect(sample(await metrics.registry.metrics(), "indexer_verifier_key_mismatch_total", 'chain_id="31337"')).toBe(0);

      // The permissive verifier accepts a valid proof claiming another outcome; the served key does not.
      const honest = await driver.prove(tampered);
      await driver.settle(tampered, { outcome: honest.outcome + 1n, proof: honest.proof });
      await driver.mine();
      await indexer.synced();
      expect((await verdicts()).get(tampered)).toBe(false);

      const report = await health();
      expect(report.status).toBe("DEGRADED");
      expect(report.checks.find((c) => c.name === "verifier:localnet-31337")).toEqual({
        name: "verifier:localnet-31337",
        status: "DEGRADED",
        latencyMs: null,
        detail: "1 settled proof accepted on chain fail under the served verification key: the key or the verifier is wrong",
      });
      expect(sample(await metrics.registry.metrics(), "indexer_verifier_key_mismatch_total", 'chain_id="31337"')).toBe(1);
      expect(events.filter((e) => e.type === "rejected-proofs")).toEqual([{ type: "rejected-proofs", chainId: 31337, betIds: [tampered.toString()] }]);
      expect(lines.some((l) => l.level === 50 && String(l.msg).includes("the key or the verifier is wrong"))).toBe(true);
    } finally {
      await indexer.stop();
    }
  }, 120_000);

  it("a key file changed under the registered network re-indexes it: nothing verified under the old key is served as verified", async () => {
    // Another key (one constant changed): a development chain only warns that the verifier does not hold it.
    const key = JSON.parse(readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8")) as { vk_alpha_1: string[] };
    key.vk_alpha_1[0] = (BigInt(key.vk_alpha_1[0] as string) + 1n).toString();
    const other = join(dir, "other-key.json");
    writeFileSync(other, JSON.stringify(key));
    const resetsBefore = (await db.prisma.indexingCursor.findFirstOrThrow()).resets;
    lines.length = 0;
    const events: IndexerEvent[] = [];
    const indexer = createIndexer({ db, logger, networks: [chain.network({ verificationKeyPath: other })], onEvent: (e) => events.push(e) });
    try {
      await indexer.start();
      expect(lines.some((l) => l.msg === "verification key changed: the network's results are re-indexed and re-verified under the new key")).toBe(true);
      expect(events.find((e) => e.type === "reset")).toMatchObject({ type: "reset", chainId: 31337, reason: "verification key changed" });
      await indexer.synced();
      // The genuine proof does not verify under this key: re-verified, it is served as unverified.
      const after = await verdicts();
      expect(after.get(genuine)).toBe(false);
      expect(after.get(tampered)).toBe(false);
      const cursor = await db.prisma.indexingCursor.findFirstOrThrow();
      expect(cursor.resets).toBe(resetsBefore + 1);
      // Counted afresh under the new key: both settled proofs fail under it.
      expect(cursor.rejectedProofs).toBe(2);
      const network = await db.prisma.network.findFirstOrThrow();
      expect(network.verificationKeyJson).toBe(readFileSync(other, "utf8"));
    } finally {
      await indexer.stop();
    }
  }, 120_000);
});
