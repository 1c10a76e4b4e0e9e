// Read replicas end to end, over a real PostgreSQL streaming replica (test/replica.ts): the stack of
// `npm start` (three subgraphs + gateway in one process) wired from the configuration as every
// composition root wires it, DATABASE_URL on the primary and DATABASE_READ_URLS on the replica.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { READ_PINS_HONOURED_HEADER } from "../core/request-scope.ts";
import { createReadRouter, READ_APPLICATION_NAME, type ReadRouter } from "../core/read-replicas.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { eventually } from "../test/eventually.ts";
import { type ClusterNode, createReplicatedCluster, type ReplicatedCluster, replicaService } from "../test/replica.ts";
import { describeWith } from "../test/services.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { startStack, type RunningStack } from "./stack.ts";
import { openConfiguredDatabase, openReadReplicas, subgraphDeps } from "./wiring.ts";

const MAX_LAG = 5;

describeWith(replicaService, "read replicas (DATABASE_READ_URLS) over a streaming replica", () => {
  let cluster: ReplicatedCluster;
  let writer: Database;
  let serving: Database;
  let reads: ReadRouter;
  let stack: RunningStack;
  let chainId: bigint;
  let wallet: string;
  /** Every indexed head a client was shown, in order, per request. */
  const seen: bigint[] = [];

  const sql = async <T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  };

  /** One request through the gateway: the indexed head of the chain and the wallet's bet count. Fails on any error. */
  const request = async (): Promise<bigint> => {
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `query ($c: ChainId, $w: Address!) { networkConfigs(chainId: $c) { indexing { indexedBlock } } playerBets(wallet: $w, first: 1) { totalCount } }`,
        variables: { c: Number(chainId), w: wallet },
      }),
    });
    const body = (await response.json()) as { data?: { networkConfigs: { indexing: { indexedBlock: string } }[] }; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    const head = BigInt(body.data!.networkConfigs[0]!.indexing.indexedBlock);
    seen.push(head);
    return head;
  };

  const advancePrimary = (blocks: number) =>
    writer.prisma.indexingCursor.update({ where: { chainId }, data: { indexedBlock: { increment: blocks }, headBlock: { increment: blocks } } });
  const primaryHead = async () => (await writer.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId } })).indexedBlock;
  const replicaState = () => reads.status()[0]!.state;
  /** A router of its own over the one replica, checked every 200 ms, judged by `maxReplayLagMs` of replay lag. */
  const ownRouter = (maxReplayLagMs: number) =>
    createReadRouter({
      primary: serving,
      primaryUrl: cluster.primary.url,
      replicaUrls: [cluster.replica.url],
      maxLagBlocks: MAX_LAG,
      maxReplayLagMs,
      checkIntervalMs: 200,
      connectTimeoutMs: 500,
      poolSize: 1,
      statementTimeoutMs: 0,
      logger: silentLogger(),
    });
  /** Statements reading bets that this service's connections ran on the replica (its log: test/replica.ts). */
  const betReadsOnReplica = () =>
    cluster.replica
      .log()
      .split("\n")
      .filter((line) => line.startsWith(`${READ_APPLICATION_NAME}: `) && /"(Bet|PlayerBetCount)"/.test(line)).length;

  beforeAll(async () => {
    cluster = await createReplicatedCluster();
    writer = await openDatabase({ url: cluster.primary.url, migrate: true });
    const fixtures = await seedFixtures(writer, { bets: 30, proofCache: readProofCache() });
    wallet = fixtures.whale;
    chainId = (await writer.prisma.indexingCursor.findFirstOrThrow({ orderBy: { chainId: "asc" } })).chainId;
    const config = loadConfig(["shared"], {
      DATABASE_URL: cluster.primary.url,
      DATABASE_READ_URLS: ` ${cluster.replica.url} `,
      DATABASE_READ_MAX_LAG_BLOCKS: String(MAX_LAG),
      // These tests pause replay for seconds and judge the replica by blocks; replay lag has its own test.
      DATABASE_READ_MAX_REPLAY_LAG_MS: "60000",
      DATABASE_READ_CHECK_INTERVAL_MS: "200",
      DATABASE_READ_CONNECT_TIMEOUT_MS: "500",
      DATABASE_POOL_SIZE: "4",
      // A stalled replica holds a read for statement timeout + connect timeout before the primary answers it.
      DATABASE_STATEMENT_TIMEOUT_MS: "1500",
    });
    const logger = silentLogger();
    serving = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
    reads = (await openReadReplicas(config, serving, logger))!;
    stack = await startStack({ deps: subgraphDeps(serving, logger, config, reads), host: "127.0.0.1", port: 0, gateway: testGatewaySettings() });
  });

  afterAll(async () => {
    cluster?.replica.freeze(false);
    await stack?.stop();
    await reads?.close();
    await serving?.close();
    await writer?.close();
    await cluster?.destroy();
  });

  it("has its subgraphs tell the gateway they read by pin (so that it never merges calls of different pins)", async () => {
    for (const url of Object.values(stack.subgraphUrls)) {
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
      expect(response.status).toBe(200);
      expect(response.headers.get(READ_PINS_HONOURED_HEADER), url).toBe("1");
    }
  });

  it("serves reads from the replica once it has replayed the primary", async () => {
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the replica serving (state ${replicaState()})`,
    );
    expect(betReadsOnReplica()).toBe(0);
    expect(await request()).toBe(await primaryHead());
    expect(betReadsOnReplica()).toBeGreaterThan(0);

    // With replay paused and the primary one block ahead (within the lag limit), answers keep the
    // replica's head: they come from the replica, not the primary.
    await sql(cluster.replica.url, "SELECT pg_wal_replay_pause()");
    const before = await primaryHead();
    await advancePrimary(1);
    await reads.check();
    expect(replicaState()).toBe("serving");
    for (let i = 0; i < 3; i++) expect(await request()).toBe(before);
  });

  it("runs the replica's reads without parallel workers, as the primary's serving pool does (issue 21)", async () => {
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the replica serving (state ${replicaState()})`,
    );
    const settingOf = async (db: Database) =>
      (
        await db.prisma.$queryRaw<{ replica: boolean; workers: string }[]>`
          SELECT pg_is_in_recovery() AS replica, current_setting('max_parallel_workers_per_gather') AS workers`
      )[0];
    // The router's pick is the replica (in recovery), not the primary it falls back to.
    expect(await settingOf(reads.pick())).toEqual({ replica: true, workers: "0" });
    // Control: the replica server's own setting, on a connection of the test's, is not 0.
    const [server] = await sql<{ workers: string }>(cluster.replica.url, "SELECT current_setting('max_parallel_workers_per_gather') AS workers");
    expect(server?.workers).not.toBe("0");
  });

  it("skips a replica lagging beyond DATABASE_READ_MAX_LAG_BLOCKS, and the head never goes back", async () => {
    const start = await primaryHead();
    // Step by step past the limit; between steps the routing sees the lag as of its last check.
    for (let step = 0; step < MAX_LAG + 2; step++) {
      await advancePrimary(1);
      await request();
    }
    await eventually(
      () => replicaState() === "lagging",
      5_000,
      () => `the replica skipped as lagging (state ${replicaState()})`,
    );
    const top = await primaryHead();
    expect(top).toBe(start + BigInt(MAX_LAG + 2));
    expect(await request()).toBe(top);
    // The floor: whatever the routing decides from here, no answer is behind the head served.
    for (let i = 0; i < 5; i++) expect(await request()).toBe(top);

    await sql(cluster.replica.url, "SELECT pg_wal_replay_resume()");
    await eventually(
      () => replicaState() === "serving",
      10_000,
      () => `the caught-up replica serving again (state ${replicaState()})`,
    );
    expect(await request()).toBe(top);
    expect(seen).toEqual([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("answers from the primary, without an error, while the replica is down, and uses it again once it is back", async () => {
    // A request pinned to the replica before it went down (a gateway request between two calls).
    expect(replicaState()).toBe("serving");
    expect(reads.pick("pinned-across-down") === serving).toBe(false);
    await cluster.replica.stop();
    // Straight away, before any check noticed: the reads that fail on the replica run on the primary.
    for (let i = 0; i < 5; i++) expect(await request()).toBe(await primaryHead());
    await eventually(
      () => replicaState() === "down",
      5_000,
      () => `the stopped replica down (state ${replicaState()})`,
    );
    // Its next call reads the primary, which is ahead of anything the replica answered.
    expect(reads.pick("pinned-across-down") === serving).toBe(true);
    await advancePrimary(2);
    for (let i = 0; i < 3; i++) expect(await request()).toBe(await primaryHead());

    cluster.replica.start();
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the restarted replica serving (state ${replicaState()})`,
    );
    const served = betReadsOnReplica();
    expect(await request()).toBe(await primaryHead());
    expect(betReadsOnReplica()).toBeGreaterThan(served);
    expect(seen).toEqual([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("skips a stalled replica (it keeps its sockets but never answers) without an error, and uses it again once it answers", async () => {
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the replica serving (state ${replicaState()})`,
    );
    cluster.replica.freeze(true);
    try {
      // Reads already sent to it wait for the client's deadline, then run on the primary.
      const started = performance.now();
      for (let i = 0; i < 3; i++) expect(await request()).toBe(await primaryHead());
      await eventually(
        () => replicaState() === "down",
        5_000,
        () => `the stalled replica skipped (state ${replicaState()})`,
      );
      expect(performance.now() - started).toBeLessThan(10_000);
      const served = betReadsOnReplica();
      for (let i = 0; i < 3; i++) expect(await request()).toBe(await primaryHead());
      expect(betReadsOnReplica()).toBe(served);
    } finally {
      cluster.replica.freeze(false);
    }
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the thawed replica serving (state ${replicaState()})`,
    );
    const served = betReadsOnReplica();
    for (let i = 0; i < 3; i++) expect(await request()).toBe(await primaryHead());
    expect(betReadsOnReplica()).toBeGreaterThan(served);
    expect(seen).toEqual([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("reads a pinned request's later calls where its first call read, unless that would show a head older than one served since", async () => {
    const router = await ownRouter(60_000);
    const state = () => router.status()[0]!.state;
    try {
      await eventually(
        () => state() === "serving",
        20_000,
        () => `the replica serving (state ${state()})`,
      );
      const onReplica = router.pick();
      // Which server a pick is (toBe on a Database would print the whole client on failure).
      const where = (db: Database) => (db === serving ? "primary" : db === onReplica ? "replica" : "other");
      expect(where(onReplica)).toBe("replica");
      const checked = BigInt(router.status()[0]!.heads[chainId.toString()]!);
      expect(where(router.pick("request-1"))).toBe("replica");
      // Its networks call shows a head the replica replayed after its last check: the floor rises
      // past the replica's checked head, yet the rest of this request still reads the replica.
      router.observe([{ chainId, indexedBlock: checked + 1n }], "request-1");
      expect(where(router.pick())).toBe("primary"); // a new request: the replica is behind the floor as checked
      expect(where(router.pick("request-1"))).toBe("replica");
      // Another request served a head beyond anything this one saw of the replica: reading the
      // replica now could show less than that, so the rest of this request reads the primary.
      router.observe([{ chainId, indexedBlock: checked + 2n }]);
      expect(where(router.pick("request-1"))).toBe("primary");
      expect(where(router.pick("request-1"))).toBe("primary");
    } finally {
      await router.close();
    }
  });

  it("skips a replica whose replay stopped once it misses WAL older than DATABASE_READ_MAX_REPLAY_LAG_MS, with no block indexed", async () => {
    const router = await ownRouter(600);
    const state = () => router.status()[0]!.state;
    try {
      await eventually(
        () => state() === "serving",
        20_000,
        () => `the replica serving (state ${state()})`,
      );
      await sql(cluster.replica.url, "SELECT pg_wal_replay_pause()");
      const head = await primaryHead();
      // Rows written on the primary, none of them an indexed block.
      await sql(cluster.primary.url, "CREATE TABLE IF NOT EXISTS replay_probe (n int); INSERT INTO replay_probe VALUES (1)");
      await eventually(
        () => state() === "replay-lag",
        5_000,
        () => `the paused replica skipped for its replay lag (state ${state()}, ${JSON.stringify(router.status())})`,
      );
      expect(await primaryHead()).toBe(head);
      expect(router.status()[0]!.heads[chainId.toString()]).toBe(head.toString());
      expect(router.pick() === serving).toBe(true);
      await sql(cluster.replica.url, "SELECT pg_wal_replay_resume()");
      await eventually(
        () => state() === "serving",
        10_000,
        () => `the resumed replica serving (state ${state()})`,
      );
      expect(router.pick() === serving).toBe(false);
    } finally {
      await sql(cluster.replica.url, "SELECT pg_wal_replay_resume()").catch(() => undefined);
      await router.close();
    }
  });

  it("follows a reset down: once the primary's head went back, the replica at that head serves again, and no answer mixes before and after", async () => {
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the replica serving (state ${replicaState()})`,
    );
    /** One request: the chain's indexed head and the wallet's bet count, as one server saw them. */
    const pair = async () => {
      const response = await fetch(`${stack.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query: `query ($c: ChainId, $w: Address!) { networkConfigs(chainId: $c) { indexing { indexedBlock } } playerBets(wallet: $w, first: 1) { totalCount } }`,
          variables: { c: Number(chainId), w: wallet },
        }),
      });
      const body = (await response.json()) as {
        data?: { networkConfigs: { indexing: { indexedBlock: string } }[]; playerBets: { totalCount: number } };
        errors?: unknown[];
      };
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      return `${body.data!.networkConfigs[0]!.indexing.indexedBlock}/${body.data!.playerBets.totalCount}`;
    };
    const top = await primaryHead();
    const before = await pair(); // served: the floor is at the old head now
    expect(before).toMatch(new RegExp(`^${top}/[1-9]`));
    // A reset (a new chain under the same id), in one transaction: the indexer starts over far
    // below, the wallet's bets are gone; the replica replays that. A floor that only grows would
    // keep every replica "behind-floor" from here on.
    const low = top - 10n;
    await sql(
      cluster.primary.url,
      `BEGIN; DELETE FROM "Bet" WHERE lower(player) = lower('${wallet}');
       UPDATE "IndexingCursor" SET "indexedBlock" = ${low}, "headBlock" = ${low} WHERE "chainId" = ${chainId}; COMMIT;`,
    );
    const after = `${low}/0`;
    const during: string[] = [];
    await eventually(
      async () => {
        during.push(await pair());
        return replicaState() === "serving" && reads.status()[0]!.heads[chainId.toString()] === low.toString();
      },
      10_000,
      () => `the replica at the reset head serving (${JSON.stringify(reads.status())})`,
    );
    // Each answer is one server's before or after, never half of each; once after, never before.
    expect(during.filter((answer) => answer !== before && answer !== after)).toEqual([]);
    expect(during.slice(during.indexOf(after) >= 0 ? during.indexOf(after) : during.length)).not.toContain(before);
    const readsBefore = betReadsOnReplica();
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) answers.push(await pair());
    expect(answers).toEqual(Array.from({ length: 5 }, () => after));
    expect(betReadsOnReplica()).toBeGreaterThan(readsBefore);
  });
});

describeWith(replicaService, "read pins: one gateway request reads one database server", () => {
  let cluster: ReplicatedCluster;
  let writer: Database;
  let serving: Database;
  let reads: ReadRouter;
  let stack: RunningStack;
  let bet: { chainId: bigint; betId: string; placedTx: string };

  const sql = async <T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const statusOn = async (url: string) =>
    (await sql<{ status: string }>(url, `SELECT status::text FROM "Bet" WHERE "chainId" = $1 AND "betId" = $2`, [bet.chainId.toString(), bet.betId]))[0]
      ?.status;

  beforeAll(async () => {
    cluster = await createReplicatedCluster({ replicas: 2 });
    writer = await openDatabase({ url: cluster.primary.url, migrate: true });
    await seedFixtures(writer, { bets: 30, proofCache: readProofCache() });
    const settled = await writer.prisma.bet.findFirstOrThrow({
      where: { status: "SETTLED", result: { isNot: null } },
      orderBy: [{ chainId: "asc" }, { betId: "asc" }],
    });
    bet = { chainId: settled.chainId, betId: settled.betId.toString(), placedTx: settled.placedTx };
    const config = loadConfig(["shared"], {
      DATABASE_URL: cluster.primary.url,
      DATABASE_READ_URLS: cluster.replicas.map((r) => r.url).join(","),
      DATABASE_READ_MAX_LAG_BLOCKS: String(MAX_LAG),
      DATABASE_READ_MAX_REPLAY_LAG_MS: "60000",
      DATABASE_READ_CHECK_INTERVAL_MS: "200",
      DATABASE_READ_CONNECT_TIMEOUT_MS: "500",
      DATABASE_POOL_SIZE: "4",
    });
    const logger = silentLogger();
    serving = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
    reads = (await openReadReplicas(config, serving, logger))!;
    stack = await startStack({ deps: subgraphDeps(serving, logger, config, reads), host: "127.0.0.1", port: 0, gateway: testGatewaySettings() });
  });

  afterAll(async () => {
    for (const replica of cluster?.replicas ?? []) await sql(replica.url, "SELECT pg_wal_replay_resume()").catch(() => undefined);
    await stack?.stop();
    await reads?.close();
    await serving?.close();
    await writer?.close();
    await cluster?.destroy();
  });

  it("never answers one request with a bet's status from one replica and its result from another", async () => {
    const [a, b] = cluster.replicas as [ClusterNode, ClusterNode];
    await eventually(
      () => reads.status().every((r) => r.state === "serving"),
      20_000,
      () => `both replicas serving (${JSON.stringify(reads.status())})`,
    );
    await eventually(
      async () => (await statusOn(b.url)) === "SETTLED",
      10_000,
      () => "the settled bet on the second replica",
    );
    // The second replica stops replaying; the primary undoes the settlement (as a reorg would),
    // and the first replica replays that: two replicas in step by blocks, apart on this bet.
    await sql(b.url, "SELECT pg_wal_replay_pause()");
    await sql(
      cluster.primary.url,
      `WITH gone AS (DELETE FROM "BetResult" WHERE "chainId" = $1 AND "betId" = $2)
       UPDATE "Bet" SET status = 'PENDING', "settledBlock" = NULL, "settledBlockHash" = NULL, "settledTx" = NULL, "settledAt" = NULL,
         "lastChangeBlock" = "placedBlock", "finalizedUpdateBlock" = NULL WHERE "chainId" = $1 AND "betId" = $2`,
      [bet.chainId.toString(), bet.betId],
    );
    await eventually(
      async () => (await statusOn(a.url)) === "PENDING",
      10_000,
      () => "the undone settlement replayed on the first replica",
    );
    expect(await statusOn(b.url)).toBe("SETTLED");
    await reads.check();
    expect(reads.status().map((r) => r.state)).toEqual(["serving", "serving"]);

    const statuses = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const response = await fetch(`${stack.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query: `query ($c: ChainId!, $tx: Bytes32!) { betsByTransaction(chainId: $c, txHash: $tx) { betId status result { won } } }`,
          variables: { c: Number(bet.chainId), tx: bet.placedTx },
        }),
      });
      const body = (await response.json()) as { data?: { betsByTransaction: { betId: string; status: string; result: unknown }[] }; errors?: unknown[] };
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      const answer = body.data!.betsByTransaction.find((b) => b.betId === bet.betId)!;
      // One server's view: SETTLED with its result (the paused replica), or PENDING without (the other).
      expect({ status: answer.status, hasResult: answer.result !== null }, `request ${i}`).toEqual({
        status: answer.status,
        hasResult: answer.status === "SETTLED",
      });
      statuses.add(answer.status);
    }
    // And requests still spread over both replicas.
    expect([...statuses].sort()).toEqual(["PENDING", "SETTLED"]);
  });
});
