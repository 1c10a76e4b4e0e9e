// GET /metrics of a real `bin/indexer.ts` process (embedded database in a temporary DATA_DIR)
// following a real anvil: indexed/head blocks and lag per network, readiness, events by mode.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { releaseProverResources } from "../zk/groth16.ts";
import { ReorgTooDeepError, RpcUnavailableError } from "./errors.ts";
import { createIndexerMetrics } from "./metrics.ts";
import { networksFileJson, startTestChain, type TestChain } from "../test/chain.ts";
import { spawnTypeScript, type Spawned } from "../test/spawn.ts";

let chain: TestChain;
let dir: string;
let child: Spawned | undefined;

beforeAll(async () => {
  chain = await startTestChain({ settleTimeoutSeconds: 600 });
  dir = mkdtempSync(join(tmpdir(), "indexer-metrics-"));
});

afterAll(async () => {
  await child?.stop();
  rmSync(dir, { recursive: true, force: true });
  await releaseProverResources();
  await chain?.stop();
});

/** `name{labels} value` of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const eventsTotal = (text: string) =>
  (sample(text, "indexer_events_total", 'mode="backfill"') ?? 0) + (sample(text, "indexer_events_total", 'mode="follow"') ?? 0);

it("serves per-network indexing metrics that follow the chain", async () => {
  const { driver } = chain;
  await driver.ensureCommitments(6);
  for (let i = 0; i < 3; i++) await driver.place(i);
  const { placed } = await driver.mine();
  await driver.settle(placed[0]!);
  await driver.mine();
  await driver.mineEmpty(3);

  const config = join(dir, "networks.json");
  writeFileSync(config, networksFileJson(chain.network()));
  child = spawnTypeScript("bin/indexer.ts", {
    env: { DATABASE_URL: "", DATA_DIR: join(dir, "data"), NETWORKS_CONFIG: config, METRICS_PORT: "0", LOG_LEVEL: "info" },
  });
  const metricsUrlPattern = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/;
  const metricsUrl = metricsUrlPattern.exec(await child.waitForLine((line) => metricsUrlPattern.test(line), 60_000, "its metrics URL"))![1]!;
  const scrape = async () => (await fetch(metricsUrl)).text();
  const chainLabel = `chain_id="${chain.network().chainId}"`;

  let head = await chain.pub.getBlockNumber();
  await expect.poll(async () => sample(await scrape(), "indexer_indexed_block", chainLabel), { timeout: 60_000, interval: 100 }).toBe(Number(head));
  let text = await scrape();
  expect(sample(text, "indexer_ready", chainLabel)).toBe(1);
  expect(sample(text, "indexer_head_block", chainLabel)).toBe(Number(head));
  expect(sample(text, "indexer_lag_blocks", chainLabel)).toBe(0);
  expect(sample(text, "indexer_finalized_block", chainLabel)).toBe(Number(head) - chain.network().confirmations + 1); // the newest block with `confirmations` confirmations
  expect(eventsTotal(text)).toBe(4); // three placed, one settled
  expect(text).toContain('service="indexer"');
  expect(text).toContain("process_cpu_user_seconds_total");

  // Following the head: two more bets appear in the counters and the gauges move with the chain.
  await driver.place(3);
  await driver.place(4);
  await driver.mine();
  head = await chain.pub.getBlockNumber();
  await expect.poll(async () => sample(await scrape(), "indexer_indexed_block", chainLabel), { timeout: 30_000, interval: 100 }).toBe(Number(head));
  text = await scrape();
  expect(eventsTotal(text)).toBe(6);
  expect(sample(text, "indexer_events_total", 'mode="follow"')).toBeGreaterThanOrEqual(2);
  expect(sample(text, "indexer_lag_blocks", chainLabel)).toBe(0);
  expect(await (await fetch(metricsUrl.replace("/metrics", "/graphql"))).status).toBe(404);
});

it("counts reorgs, resets and errors by code", async () => {
  const metrics = createIndexerMetrics({ defaultMetrics: false });
  metrics.observe({ type: "ready", chainId: 1, block: 10n });
  metrics.observe({ type: "reorg", chainId: 1, ancestor: 10n, depth: 3, removed: [], reverted: [] });
  metrics.observe({ type: "reset", chainId: 1, removed: 5, reason: "chain replaced" });
  metrics.observe({ type: "error", chainId: 1, error: new RpcUnavailableError("timeout"), attempt: 1, delayMs: 100 });
  metrics.observe({ type: "error", chainId: 1, error: new RpcUnavailableError("timeout"), attempt: 2, delayMs: 200 });
  metrics.observe({ type: "fatal", chainId: 1, error: new ReorgTooDeepError("past finality") });
  const text = await metrics.registry.metrics();
  expect(sample(text, "indexer_reorgs_total", 'chain_id="1"')).toBe(1);
  expect(sample(text, "indexer_last_reorg_depth", 'chain_id="1"')).toBe(3);
  expect(sample(text, "indexer_resets_total", 'chain_id="1"')).toBe(1);
  expect(sample(text, "indexer_errors_total", 'code="RPC_UNAVAILABLE",fatal="false"')).toBe(2);
  expect(sample(text, "indexer_errors_total", 'code="REORG_TOO_DEEP",fatal="true"')).toBe(1);
  expect(sample(text, "indexer_ready", 'chain_id="1"')).toBe(0);
});

it("exposes backfill progress: target block, ratio, events per second and time left", async () => {
  const metrics = createIndexerMetrics({ defaultMetrics: false });
  metrics.observe({ type: "block", chainId: 7, mode: "backfill", fromBlock: 1n, toBlock: 100n, events: 5, headBlock: 1000n, finalized: 0 });
  let text = await metrics.registry.metrics();
  expect(sample(text, "indexer_backfill_progress_ratio", 'chain_id="7"')).toBe(0);
  const progress = { block: 250n, targetBlock: 990n, ratio: 0.25, percent: 25, blocksPerSecond: 50, eventsPerSecond: 12.5, etaSeconds: 15 };
  metrics.observe({ type: "progress", chainId: 7, progress });
  text = await metrics.registry.metrics();
  expect(sample(text, "indexer_backfill_target_block", 'chain_id="7"')).toBe(990);
  expect(sample(text, "indexer_backfill_progress_ratio", 'chain_id="7"')).toBe(0.25);
  expect(sample(text, "indexer_backfill_events_per_second", 'chain_id="7"')).toBe(12.5);
  expect(sample(text, "indexer_backfill_eta_seconds", 'chain_id="7"')).toBe(15);
  // Done: the ratio is 1 and nothing is left.
  metrics.observe({ type: "ready", chainId: 7, block: 1000n });
  text = await metrics.registry.metrics();
  expect(sample(text, "indexer_backfill_progress_ratio", 'chain_id="7"')).toBe(1);
  expect(sample(text, "indexer_backfill_eta_seconds", 'chain_id="7"')).toBe(0);
});
