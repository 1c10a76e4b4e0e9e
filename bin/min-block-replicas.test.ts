// minBlock over a lagging read replica (issue 26, "Must show"): two real PostgreSQL servers, a
// primary and its streaming replica (test/replica.ts), the `npm start` stack wired from the
// configuration with DATABASE_READ_URLS on the replica. The replica's replay is paused and the
// primary moved ahead (within the lag bound, so the replica keeps serving plain reads): a query
// asking for a block the replica has not replayed is answered by the primary, one above the
// primary's head is refused, and the readAt each answer carries is the head of the server that
// answered it.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import type { ReadRouter } from "../core/read-replicas.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { eventually } from "../test/eventually.ts";
import { createReplicatedCluster, type ReplicatedCluster, replicaService } from "../test/replica.ts";
import { describeWith } from "../test/services.ts";
import { testGatewaySettings } from "../test/stack.ts";
import { startStack, type RunningStack } from "./stack.ts";
import { openConfiguredDatabase, openReadReplicas, subgraphDeps } from "./wiring.ts";

interface Answer {
  data?: { betResult: { clientSeed: string } | null } | null;
  errors?: { extensions?: Record<string, unknown> }[];
  extensions?: { readAt?: { chainId: number; block: string; hash: string }[] };
}

describeWith(replicaService, "minBlock over a lagging read replica", () => {
  let cluster: ReplicatedCluster;
  let writer: Database;
  let serving: Database;
  let reads: ReadRouter;
  let stack: RunningStack;
  let bet: { chainId: number; betId: string };

  const sql = async (url: string, text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  const primaryHead = async () => (await writer.prisma.indexingCursor.findUniqueOrThrow({ where: { chainId: BigInt(bet.chainId) } })).indexedBlock;
  const replicaState = () => reads.status()[0]!.state;
  /** The bet's clientSeed (a history field, reached through an entity fetch from betResult) and what the answer says it was read at. */
  const ask = async (minBlock?: bigint): Promise<Answer & { head: bigint | undefined }> => {
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `query ($c: ChainId!, $b: UInt256!, $m: [MinBlock!]) { betResult(chainId: $c, betId: $b, minBlock: $m) { clientSeed } }`,
        variables: { c: bet.chainId, b: bet.betId, m: minBlock === undefined ? null : [{ chainId: bet.chainId, block: minBlock.toString() }] },
      }),
    });
    const answer = (await response.json()) as Answer;
    const head = answer.extensions?.readAt?.find((pointer) => pointer.chainId === bet.chainId)?.block;
    return { ...answer, head: head === undefined ? undefined : BigInt(head) };
  };

  beforeAll(async () => {
    cluster = await createReplicatedCluster();
    writer = await openDatabase({ url: cluster.primary.url, migrate: true });
    const fixtures = await seedFixtures(writer, { bets: 20, proofCache: readProofCache() });
    bet = fixtures.sampleSettled!;
    const config = loadConfig(["shared"], {
      DATABASE_URL: cluster.primary.url,
      DATABASE_READ_URLS: cluster.replica.url,
      DATABASE_READ_MAX_LAG_BLOCKS: "5",
      // Replay is paused for seconds here; the replica is judged by blocks.
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
    if (cluster) await sql(cluster.replica.url, "SELECT pg_wal_replay_resume()").catch(() => undefined);
    await stack?.stop();
    await reads?.close();
    await serving?.close();
    await writer?.close();
    await cluster?.destroy();
  });

  it("answers a minBlock the replica lacks from the primary, refuses one above both, and says the head of the server that answered", async () => {
    await eventually(
      () => replicaState() === "serving",
      20_000,
      () => `the replica serving (state ${replicaState()})`,
    );
    const key = { chainId_betId: { chainId: BigInt(bet.chainId), betId: bet.betId } };
    const oldSeed = (await writer.prisma.bet.findUniqueOrThrow({ where: key })).clientSeed;
    const replicaHead = await primaryHead();
    await eventually(
      async () => (await ask()).head === replicaHead,
      10_000,
      () => "the replica answering at the primary's head",
    );

    // The replica stops replaying; on the primary the bet changes in a new block, two blocks ahead.
    await sql(cluster.replica.url, "SELECT pg_wal_replay_pause()");
    const newSeed = `0x${"ab".repeat(32)}`;
    await writer.prisma.$transaction([
      writer.prisma.bet.update({ where: key, data: { clientSeed: newSeed } }),
      writer.prisma.indexingCursor.update({ where: { chainId: BigInt(bet.chainId) }, data: { indexedBlock: { increment: 2 }, headBlock: { increment: 2 } } }),
    ]);
    const primary = await primaryHead();
    expect(primary).toBe(replicaHead + 2n);
    await reads.check();
    expect(replicaState()).toBe("serving"); // 2 blocks behind, within the bound of 5

    // Without minBlock: the replica answers, with its own (older) head and the data of that head.
    const plain = await ask();
    expect(plain.errors).toBeUndefined();
    expect(plain.head).toBe(replicaHead);
    expect(plain.data!.betResult!.clientSeed).toBe(oldSeed);

    // Above the replica's head, at or below the primary's: the primary answers, both subgraphs
    // (betResult's and the entity fetch of clientSeed), with the primary's head and data.
    for (const minBlock of [replicaHead + 1n, primary]) {
      const fresh = await ask(minBlock);
      expect(fresh.errors).toBeUndefined();
      expect(fresh.head).toBe(primary);
      expect(fresh.data!.betResult!.clientSeed).toBe(newSeed);
    }

    // Above every database: refused, with the best head there is; no bet (betResult is nullable: null beside the error).
    const refused = await ask(primary + 1n);
    expect(refused.data?.betResult ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: "NOT_YET_INDEXED",
      chainId: bet.chainId,
      minBlock: (primary + 1n).toString(),
      indexedBlock: primary.toString(),
    });
  });
});
