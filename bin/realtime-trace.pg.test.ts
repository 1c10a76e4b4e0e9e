// The realtime path's trace (issue 23 item 5), across three processes as an operator starts them:
// bin/indexer.ts on anvil, bin/publisher.ts and bin/realtime.ts over PostgreSQL and Redis, each
// exporting to an OTLP/HTTP (JSON) collector in this test (test/otlp-collector.ts). A bet placed and
// mined reaches a Socket.IO client, and its trace is one tree: the indexer's commit of the block
// (its SQL statements under it, the outbox INSERT among them) → the publisher's span sending the
// commit's rows (parented on the context stored with them) → the node's delivery span (parented on
// the context the feed message carried). The client receives the update without any trace field.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { networksFileJson, startTestChain, type TestChain } from "../test/chain.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { attribute, type CollectedSpan, type Collector, otelEnv, printTree, SPAN_KIND, startCollector } from "../test/otlp-collector.ts";
import { connectClient, type TestClient } from "../test/realtime.ts";
import { type Spawned, spawnTypeScript } from "../test/spawn.ts";

const testConfig = loadConfig(["test"]);
const onPostgres = testConfig.TEST_DB === "postgres";

describe.runIf(onPostgres)("the realtime path's trace: indexer commit -> outbox -> publisher -> realtime delivery", () => {
  let db: TestDatabase;
  let chain: TestChain;
  let collector: Collector;
  let dir: string;
  let client: TestClient | undefined;
  const children: Spawned[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "realtime-trace-"));
    [db, chain, collector] = await Promise.all([createTestDatabase(), startTestChain({ permissive: true }), startCollector()]);
    await chain.driver.ensureCommitments(1);
  }, 180_000);
  afterAll(async () => {
    client?.close();
    await Promise.all(children.map((child) => child.stop()));
    await chain?.stop();
    await collector?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("one trace from the indexed block to the socket delivery", async () => {
    const networksConfig = join(dir, "networks.json");
    writeFileSync(networksConfig, networksFileJson(chain.network({ rpc: { http: chain.anvil.rpcUrl } })));
    const shared = {
      ...otelEnv(collector),
      DATABASE_URL: db.url,
      DATABASE_MIGRATE_ON_START: "false",
      REDIS_URL: testConfig.TEST_REDIS_URL,
      REALTIME_REDIS_PREFIX: `trace-${randomBytes(4).toString("hex")}:`,
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      NODE_ENV: undefined,
      METRICS_PORT: undefined,
      REALTIME_PUBLISHER: undefined,
    };
    const start = (script: string, env: Record<string, string | undefined> = {}) => {
      const child = spawnTypeScript(script, { env: { ...shared, ...env } });
      children.push(child);
      return child;
    };
    const node = start("bin/realtime.ts", { PORT: "0" });
    const publisher = start("bin/publisher.ts");
    const indexer = start("bin/indexer.ts", { NETWORKS_CONFIG: networksConfig, PROOF_VERIFY_WORKERS: "0" });
    const { url, path } = await node.waitForJson<{ url: string; path: string }>((line) => line.msg === "realtime node ready", 150_000, "realtime node ready");
    await publisher.waitForJson((line) => line.msg === "publisher active", 150_000, "publisher active");
    await indexer.waitForJson((line) => line.msg === "indexer running", 150_000, "indexer running");

    client = await connectClient(url, path);
    await client.subscribe({ all: true });
    await chain.driver.place(1);
    const { placed } = await chain.driver.mine();
    const betId = placed[0]!.toString();
    await client.until(() => client!.updates.some((u) => u.betId === betId), 60_000, "the placed bet's update on the socket");
    const update = client.updates.find((u) => u.betId === betId)!;
    // What a client receives carries no trace field (the context travels beside the updates).
    expect(Object.keys(update).sort()).toEqual(["bet", "betId", "chainId", "seq", "type"]);

    const seq = BigInt(update.seq);
    const published = () =>
      collector.spans.find(
        (s) => s.service === "publisher" && BigInt(attribute(s, "bets.seq.first") ?? "0") <= seq && seq <= BigInt(attribute(s, "bets.seq.last") ?? "-1"),
      );
    await eventually(
      () => published() !== undefined,
      30_000,
      () => `the publisher's span of seq ${seq} (${collector.spans.length} spans so far)`,
    );
    const traceId = published()!.traceId;
    const inTrace = () => collector.spans.filter((s) => s.traceId === traceId);
    const childrenOf = (span: CollectedSpan) => inTrace().filter((s) => s.parentSpanId === span.spanId);
    const commitOf = () => inTrace().find((s) => s.service === "indexer" && s.name === "indexer commit");
    // Complete once the commit (with its statements) and the delivery have arrived.
    await eventually(
      () => commitOf() !== undefined && childrenOf(commitOf()!).length > 0 && inTrace().some((s) => s.service === "realtime"),
      30_000,
      () => `the trace's spans (so far:\n${printTree(inTrace(), "")})`,
    );
    process.stdout.write(`trace ${traceId} (bet ${betId}, seq ${seq}):\n${printTree(inTrace(), "")}\n`);

    // The root: the indexer's commit of the block, a trace of its own, with its SQL under it...
    const roots = inTrace().filter((s) => !s.parentSpanId);
    expect(roots.map((s) => [s.service, s.name, s.kind])).toEqual([["indexer", "indexer commit", SPAN_KIND.INTERNAL]]);
    const commit = roots[0]!;
    expect(Number(attribute(commit, "events"))).toBeGreaterThanOrEqual(1);
    const statements = childrenOf(commit).filter((s) => s.kind === SPAN_KIND.CLIENT);
    expect(statements.every((s) => s.service === "indexer" && attribute(s, "db.system") === "postgresql")).toBe(true);
    expect(statements.some((s) => /^\s*INSERT INTO "BetUpdate"/.test(attribute(s, "db.statement") ?? ""))).toBe(true);
    // ...the publisher's span sending the commit's rows, parented on the context stored with them...
    const publishes = childrenOf(commit).filter((s) => s.service === "publisher");
    expect(publishes.map((s) => [s.name, s.kind])).toEqual([["publish bets:feed", SPAN_KIND.PRODUCER]]);
    // ...and the node's delivery of that message, parented on the context the message carried.
    const deliveries = childrenOf(publishes[0]!);
    expect(deliveries.map((s) => [s.service, s.name, s.kind])).toEqual([["realtime", "deliver bets:update", SPAN_KIND.CONSUMER]]);
    expect(attribute(deliveries[0]!, "messaging.batch.message_count")).toBe(attribute(publishes[0]!, "messaging.batch.message_count"));
    // Nothing detached: every span hangs under the commit.
    const ids = new Set(inTrace().map((s) => s.spanId));
    expect(inTrace().filter((s) => s !== commit && !ids.has(s.parentSpanId ?? ""))).toEqual([]);
  }, 600_000);
});
