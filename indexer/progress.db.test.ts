// Backfill progress on a real anvil: a few hundred blocks backfilled in small ranges report their
// progress at a steady pace (one line per interval, not per batch): block X of Y with a growing
// percent, events per second and the time left, in the log and in the metrics.
import { afterAll, beforeAll, expect, it } from "vitest";
import { finalizedBlockAt } from "../core/finality.ts";
import { createLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createIndexer, type Indexer, type IndexerEvent } from "./indexer.ts";
import { createIndexerMetrics } from "./metrics.ts";
import type { BackfillProgress } from "./progress.ts";

let chain: TestChain;
let db: TestDatabase | undefined;
let indexer: Indexer | undefined;

beforeAll(async () => {
  chain = await startTestChain({ permissive: true });
});

afterAll(async () => {
  await indexer?.stop();
  await db?.close();
  await releaseProverResources();
  await chain?.stop();
});

const INTERVAL_MS = 150;
const LINE = /^backfill: block (\d+) of (\d+) \((\d{1,3}\.\d)%\), (measuring|\d+\.\d events\/s), (unknown|[0-9hms ]+) left$/;

it("logs and exposes backfill progress once per interval while it backfills", async () => {
  const { driver } = chain;
  await driver.ensureCommitments(4);
  for (let i = 0; i < 4; i++) await driver.place(i);
  await driver.mine();
  await driver.mineEmpty(150);
  await driver.ensureCommitments(8);
  for (let i = 4; i < 8; i++) await driver.place(i);
  await driver.mine();
  await driver.mineEmpty(150);
  const head = await chain.pub.getBlockNumber();
  const confirmations = chain.network().confirmations;

  const lines: { msg: string; chainId?: number; block?: string; targetBlock?: string; percent?: number; etaSeconds?: number | null }[] = [];
  const logger = createLogger({
    level: "info",
    name: "progress-test",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
  });
  const events: IndexerEvent[] = [];
  const metrics = createIndexerMetrics({ defaultMetrics: false });
  db = await createTestDatabase();
  indexer = createIndexer({
    db,
    logger,
    networks: [chain.network({ batchSize: 4, rpc: { http: chain.anvil.rpcUrl } })],
    progressIntervalMs: INTERVAL_MS,
    // Each commit takes a little while, so that the backfill spans several intervals.
    hooks: { beforeCommit: () => new Promise((resolve) => setTimeout(resolve, 8)) },
    onEvent: (event) => {
      events.push(event);
      metrics.observe(event);
    },
  });
  const started = performance.now();
  await indexer.start();
  await indexer.synced({ timeoutMs: 120_000 });
  const elapsed = performance.now() - started;

  const commits = events.filter((e) => e.type === "block" && e.mode === "backfill").length;
  const progress = events.flatMap((e): BackfillProgress[] => (e.type === "progress" ? [e.progress] : []));
  // A steady pace: at most one report per interval of the time this backfill took (measured
  // here: a loaded machine, whose commits are slower, gets the bound it earned; no share of the
  // commits, which a slow enough machine would reach). The commits' own 8 ms make the backfill
  // span several intervals.
  expect(commits).toBeGreaterThan(60);
  expect(progress.length).toBeGreaterThanOrEqual(3);
  expect(progress.length).toBeLessThanOrEqual(Math.ceil(elapsed / INTERVAL_MS) + 1);

  // Backfill runs to the finalized block of the one rule (core/finality.ts).
  const target = finalizedBlockAt(head, confirmations);
  for (const [i, p] of progress.entries()) {
    expect(p.targetBlock).toBe(target);
    expect(p.block).toBeLessThanOrEqual(target);
    if (i > 0) {
      // A report between two slow commits repeats the block (a stall shows, with a falling rate).
      expect(p.block).toBeGreaterThanOrEqual(progress[i - 1]!.block);
      expect(p.percent).toBeGreaterThanOrEqual(progress[i - 1]!.percent);
    }
    // Past the first report's block a second commit is in the window: a rate and a time left. (A
    // report of the interval timer before that commit, on a slow machine, has neither yet.)
    if (p.block > progress[0]!.block) {
      expect(p.eventsPerSecond).not.toBeNull();
      expect(p.etaSeconds).toBeGreaterThanOrEqual(0);
    }
  }
  expect(progress[progress.length - 1]!.block).toBeGreaterThan(progress[0]!.block);
  expect(progress[progress.length - 1]!.percent).toBeGreaterThan(progress[0]!.percent);

  // The log says the same, one info line per report.
  const progressLines = lines.filter((l) => l.msg.startsWith("backfill: "));
  expect(progressLines).toHaveLength(progress.length);
  for (const [i, line] of progressLines.entries()) {
    const match = LINE.exec(line.msg);
    expect(match, line.msg).not.toBeNull();
    expect(match![1]).toBe(progress[i]!.block.toString());
    expect(match![2]).toBe(target.toString());
    expect(line).toMatchObject({ chainId: chain.network().chainId, block: match![1], targetBlock: match![2], percent: Number(match![3]) });
  }
  expect(progressLines.slice(1).some((l) => / \d+\.\d events\/s, /.test(l.msg) && !/unknown left$/.test(l.msg))).toBe(true);

  // The metrics: the target, and a ratio of 1 with nothing left once following the head.
  const text = await metrics.registry.metrics();
  const value = (name: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(`chain_id="${chain.network().chainId}"`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  expect(value("indexer_backfill_target_block")).toBe(Number(target));
  expect(value("indexer_backfill_progress_ratio")).toBe(1);
  expect(value("indexer_backfill_eta_seconds")).toBe(0);

  // Following the head, no more progress reports: three of the reporting timer's intervals pass
  // (timers fire in deadline order, so its ticks due before this wait's end run first, however
  // loaded the machine is).
  const reported = progress.length;
  await driver.mineEmpty(3);
  await indexer.synced();
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 3));
  expect(events.filter((e) => e.type === "progress")).toHaveLength(reported);
});
