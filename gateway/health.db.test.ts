import { historyWithoutPendingBetCount } from "../test/registry.ts";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { buildSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { composeSupergraph } from "../scripts/supergraph.ts";
import { createMemoryFanout } from "../realtime/fanout.ts";
import { feedCheck } from "../realtime/health.ts";
import { createLocalLock } from "../realtime/lock.ts";
import { createPublisher } from "../realtime/publisher.ts";
import { createRealtime } from "../realtime/server.ts";
import { eventually } from "../test/eventually.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { testConfig } from "../test/config.ts";
import { redisService, serviceTitle, skipWithout } from "../test/services.ts";

const FULL_HEALTH = `{ health { status version uptimeSeconds checks { name status latencyMs detail } } }`;

let t: TestStack;
let dir: string;
let supergraphPath: string;
// The real Redis of the test machine (TEST_REDIS_URL, default 127.0.0.1:6379), when it has one:
// without it the stack runs without Redis and only the Redis check is skipped (not under CI).
const redisServer = await redisService();
const redis = skipWithout(redisServer) ? undefined : new Redis(testConfig.TEST_REDIS_URL, { lazyConnect: true });
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-"));
  supergraphPath = join(dir, "supergraph.graphql");
  copyFileSync("supergraph.graphql", supergraphPath);
  t = await startTestStack({ bets: 120 }, { supergraphPath, redis });
});
afterAll(async () => {
  await t?.close();
  redis?.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe("health", () => {
  it("GET /health returns exactly the health query's full selection", async () => {
    const [viaHttp, viaGraphQL] = await Promise.all([fetch(`${t.url}/health`), t.gql<{ health: unknown }>(FULL_HEALTH)]);
    expect(viaHttp.status).toBe(200);
    expect(viaHttp.headers.get("cache-control")).toBe("no-store");
    expect(await viaHttp.json()).toEqual(viaGraphQL.data!.health);
  });

  it("checks the database, every subgraph and every network's indexer", async () => {
    const { data } = await t.gql<{
      health: { status: string; version: string; checks: { name: string; status: string; latencyMs: number | null; detail: string | null }[] };
    }>(FULL_HEALTH);
    const health = data!.health;
    expect(health.status).toBe("OK");
    expect(health.version).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
    expect(health.checks.map((c) => `${c.name}=${c.status}`)).toEqual([
      "database=OK",
      ...(redis ? ["redis=OK"] : []),
      "subgraph:history=OK",
      "subgraph:networks=OK",
      "subgraph:results=OK",
      "indexer:devnet=OK",
      "indexer:localnet=OK",
      "supergraph=OK",
    ]);
    expect(health.checks[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    // The served schema's hash and where it came from (gateway/supergraph-source.ts).
    expect(health.checks.at(-1)).toMatchObject({ detail: `${createHash("sha256").update(readFileSync(supergraphPath, "utf8")).digest("hex")} (file)` });
  });

  it.skipIf(!redis)(serviceTitle("checks Redis", redisServer), async () => {
    const { data } = await t.gql<{ health: { checks: { name: string; status: string }[] } }>(FULL_HEALTH);
    expect(data?.health.checks.find((c) => c.name === "redis")?.status).toBe("OK");
  });

  it("degrades when an indexer falls behind or goes quiet", async () => {
    await t.db.prisma.indexingCursor.update({ where: { chainId: 1337n }, data: { updatedAt: new Date(Date.now() - 3600_000) } });
    await t.db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { headBlock: { increment: 500 } } });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the report cache
    const response = await fetch(`${t.url}/health`);
    const report = (await response.json()) as { status: string; checks: { name: string; status: string; detail: string }[] };
    expect(response.status).toBe(200);
    expect(report.status).toBe("DEGRADED");
    expect(report.checks.find((c) => c.name === "indexer:devnet")).toMatchObject({ status: "DEGRADED", detail: expect.stringMatching(/^stale/) });
    expect(report.checks.find((c) => c.name === "indexer:localnet")).toMatchObject({
      status: "DEGRADED",
      detail: expect.stringMatching(/^behind the head: lag 50\d blocks/),
    });
    const { data } = await t.gql<{ networkConfigs: { indexing: { lagBlocks: number } }[] }>(`{ networkConfigs(chainId: 31337) { indexing { lagBlocks } } }`);
    expect(data!.networkConfigs[0]!.indexing.lagBlocks).toBeGreaterThanOrEqual(500);
  });

  it("says how far a backfill is: block X of Y (the finalized block) and the percent done since the deploy block", async () => {
    const network = await t.db.prisma.network.findUniqueOrThrow({ where: { chainId: 31337n }, include: { contracts: true } });
    const start = network.contracts.find((c) => c.name === "BetVault")!.deployBlock - 1n;
    const target = start + 1000n;
    await t.db.prisma.indexingCursor.update({
      where: { chainId: 31337n },
      // The head at which the finalized block (core/finality.ts) is the target.
      data: {
        isReady: false,
        indexedBlock: start + 250n,
        headBlock: target + BigInt(network.confirmations) - 1n,
        finalizedBlock: target,
        updatedAt: new Date(),
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the report cache
    const report = (await (await fetch(`${t.url}/health`)).json()) as { checks: { name: string; status: string; detail: string }[] };
    expect(report.checks.find((c) => c.name === "indexer:localnet")).toMatchObject({
      status: "DEGRADED",
      detail: expect.stringMatching(
        new RegExp(`^backfilling: block ${start + 250n} of ${target} \\(25\\.0%\\), lag ${750 + network.confirmations - 1} blocks, last write \\ds ago$`),
      ),
    });
    // The same through GraphQL: the share done, 0..1.
    const { data } = await t.gql<{ networkConfigs: { indexing: { backfillProgress: number; isReady: boolean } }[] }>(
      `{ networkConfigs(chainId: 31337) { indexing { backfillProgress isReady } } }`,
    );
    expect(data!.networkConfigs[0]!.indexing).toEqual({ backfillProgress: 0.25, isReady: false });
    const devnet = await t.gql<{ networkConfigs: { indexing: { backfillProgress: number; isReady: boolean } }[] }>(
      `{ networkConfigs(chainId: 1337) { indexing { backfillProgress isReady } } }`,
    );
    expect(devnet.data!.networkConfigs[0]!.indexing).toEqual({ backfillProgress: 1, isReady: true });
  });

  it("shows a backfilling network in /readyz without leaving rotation; ?backfilled= waits for it", async () => {
    await t.db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { isReady: false, updatedAt: new Date() } });
    type Readiness = { status: string; reasons: string[]; checks: { name: string; status: string; detail: string | null }[] };
    const readyz = async (query = "") => {
      const response = await fetch(`${t.url}/readyz${query}`);
      return { status: response.status, body: (await response.json()) as Readiness };
    };
    // Every replica shares the indexer: its backfill shows, and the gateway stays ready.
    await eventually(
      async () => (await readyz()).body.checks.some((c) => c.name === "indexer:localnet" && c.status === "DEGRADED"),
      5_000,
      "the backfill in /readyz",
    );
    expect(await readyz()).toMatchObject({ status: 200, body: { status: "READY", reasons: [] } });
    // A blue/green switch asks for the backfill: not ready until the network is done.
    expect(await readyz("?backfilled=all")).toMatchObject({ status: 503, body: { status: "NOT_READY", reasons: ["backfill:localnet: backfilling"] } });
    expect((await readyz("?backfilled=1337")).status).toBe(200);
    expect(await readyz("?backfilled=1337,31337")).toMatchObject({ status: 503, body: { reasons: ["backfill:localnet: backfilling"] } });
    await t.db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { isReady: true, updatedAt: new Date() } });
    expect((await readyz("?backfilled=all")).status).toBe(200);
    expect((await fetch(`${t.url}/readyz?backfilled=0`)).status).toBe(400);
  });

  it("says when a backfill is a re-index after a reset (a redeployed contract, a lost history, a changed verification key)", async () => {
    const cursor = await t.db.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: 31337n } });
    await t.db.prisma.indexingCursor.update({ where: { chainId: 31337n }, data: { isReady: false, resets: cursor.resets + 1, updatedAt: new Date() } });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the report cache
    const report = (await (await fetch(`${t.url}/health`)).json()) as { checks: { name: string; status: string; detail: string }[] };
    expect(report.checks.find((c) => c.name === "indexer:localnet")).toMatchObject({
      status: "DEGRADED",
      detail: expect.stringMatching(new RegExp(`^re-indexing after reset ${cursor.resets + 1} \\(the indexer's log says why\\): block \\d+ of \\d+ `)),
    });
  });
});

describe("metrics", () => {
  it("counts requests per operation and times subgraph fetches, on the gateway and each subgraph", async () => {
    await t.gql(`query WalletPending { pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`);
    await t.gql(`query WalletPending { pendingBetCount(wallet: "nope") }`);
    const gateway = await (await fetch(`${t.url}/metrics`)).text();
    expect(gateway).toMatch(/graphql_requests_total\{operation="WalletPending",outcome="ok",service="gateway"\} 1/);
    expect(gateway).toMatch(/graphql_requests_total\{operation="WalletPending",outcome="error",service="gateway"\} 1/);
    expect(gateway).toMatch(/subgraph_fetch_duration_seconds_count\{service="gateway",subgraph="history"\} [1-9]/);
    expect(gateway).toContain("process_cpu_user_seconds_total");
    // A single-subgraph operation reaches its subgraph as the client named it (gateway/single-subgraph.ts);
    // a planned fetch would be named <name>__<subgraph>__<n>.
    const history = await (await fetch(t.stack.subgraphUrls.history!.replace("/graphql", "/metrics"))).text();
    expect(history).toMatch(/graphql_request_duration_seconds_count\{service="subgraph-history",operation="WalletPending"\} [1-9]/);
  });
});

describe("schema download", () => {
  it("serves the public schema as SDL, without federation machinery", async () => {
    const response = await fetch(`${t.url}/schema.graphql`);
    expect(response.status).toBe(200);
    const sdl = await response.text();
    const betResults = buildSchema(sdl).getQueryType()!.getFields().betResults!;
    expect(String(betResults.type)).toBe("[Bet]!");
    expect(betResults.args.map((arg) => `${arg.name}: ${String(arg.type)}`)).toEqual(["chainId: ChainId!", "betIds: [UInt256!]!", "minBlock: [MinBlock!]"]);
    expect(sdl).toContain("scalar UInt256");
    expect(sdl).not.toMatch(/join__|@link|_entities|_service/);
  });
});

describe("supergraph file", () => {
  it("is reloaded without restart when it changes", async () => {
    const before = await t.gql(`{ pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`);
    expect(before.data).toEqual({ pendingBetCount: 0 });

    const withoutCount = historyWithoutPendingBetCount();
    expect(withoutCount).not.toContain("pendingBetCount");
    const composed = composeSupergraph({ history: withoutCount });
    expect(composed.errors).toBeUndefined();
    writeFileSync(supergraphPath, composed.supergraphSdl!);

    let after: Awaited<ReturnType<typeof t.gql>> | undefined;
    for (let i = 0; i < 50; i++) {
      after = await t.gql(`{ pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`);
      if (after.errors) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(after!.errors![0]!.extensions!.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect((await t.gql(`{ networkConfigs { chainId } }`)).data).toBeTruthy();
  });
});

// Last: it mounts Socket.IO on this file's gateway, as `npm start` and GATEWAY_SOCKETIO=1 do.
describe("Socket.IO on the API host", () => {
  it("adds a feed check: OK while the publisher's feed flows, DEGRADED while the node delivers from the outbox itself", async () => {
    const logger = silentLogger();
    const fanout = createMemoryFanout();
    const realtime = await createRealtime(t.stack.http.server, { db: t.db, logger, fanout, path: "/socket.io", feedTimeoutMs: 1_500, localPollMs: 200 });
    const publisher = createPublisher({ db: t.db, fanout, logger, lock: createLocalLock(), pollIntervalMs: 200, heartbeatMs: 200 });
    publisher.start();
    t.stack.gateway.health.addChecks(() => [feedCheck(realtime.state())]);
    const feed = async () => {
      const response = await fetch(`${t.url}/health`);
      const report = (await response.json()) as { status: string; checks: { name: string; status: string; detail: string | null }[] };
      return { http: response.status, status: report.status, feed: report.checks.find((c) => c.name === "feed") };
    };
    let report: Awaited<ReturnType<typeof feed>> | undefined;
    const until = (status: string) =>
      eventually(
        async () => {
          report = await feed();
          return report.feed?.status === status;
        },
        15_000,
        `feed ${status}`,
        200,
      );
    try {
      await until("OK");
      expect(report).toMatchObject({ http: 200, feed: { status: "OK", detail: null } });
      await publisher.stop(); // no heartbeat any more: after feedTimeoutMs the node reads the outbox itself
      await until("DEGRADED");
      expect(report).toMatchObject({ http: 200, status: "DEGRADED", feed: { detail: "delivering from the outbox locally" } });
    } finally {
      await publisher.stop();
      await realtime.close();
    }
  });
});
