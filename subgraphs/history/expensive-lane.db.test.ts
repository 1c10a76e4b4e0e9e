import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../../bin/stack.ts";
import { loadConfig } from "../../core/config.ts";
import type { Database } from "../../core/db.ts";
import { silentLogger } from "../../core/logger.ts";
import { NetworkDirectory } from "../../core/networks.ts";
import { readProofCache } from "../../fixtures/proof-cache.ts";
import { seedFixtures, type FixtureSummary } from "../../fixtures/seed.ts";
import type { PrismaClient } from "../../prisma/generated/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/db.ts";
import { testGatewaySettings } from "../../test/stack.ts";
import { ExpensiveLane } from "../kit/expensive-lane.ts";

// The bulkhead (issue 21): a crowd of filtered totalCounts — each made slow here, test-only, by a
// pg_sleep in front of every count of Bet rows, holding a pool connection as a count of a large
// table does — runs in the expensive lane, at most LANE connections at once. Cheap indexed pages
// of another client answer meanwhile without ever waiting for a connection: the pool's waiting
// count (pg's own) is sampled throughout, and must stay 0. Without the lane the same crowd takes
// every connection of the pool (5 in tests) and the pages wait.

const onPostgres = loadConfig(["test"]).TEST_DB === "postgres";
const LANE = 2;
const ATTACKERS = 8;
const COUNT_SLEEP_SECONDS = 0.8;

/** Every `bet.count` (the counts no counter serves) first sleeps on its own connection, then counts. */
function withSlowCounts(db: TestDatabase): Database {
  const base = db.prisma;
  const prisma = base.$extends({
    query: {
      bet: {
        async count({ args, query }) {
          await base.$queryRaw`SELECT 1 AS slept FROM pg_sleep(${COUNT_SLEEP_SECONDS})`;
          return query(args);
        },
      },
    },
  }) as unknown as PrismaClient;
  return { ...db, prisma };
}

describe.runIf(onPostgres)("the expensive lane (PostgreSQL)", () => {
  let db: TestDatabase;
  let fixtures: FixtureSummary;
  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 120, proofCache: readProofCache() });
  });
  afterAll(async () => {
    await db?.close();
  });

  /**
   * ATTACKERS slow filtered counts, each from its own address, then cheap pages of another client
   * until the attack is over. Returns the pool's highest waiting count once every attacker's page
   * is done (from then on only the counts and the cheap pages use the pool), and how many cheap
   * pages were answered while the lane was full with others queued.
   */
  async function attack(lane: ExpensiveLane | undefined): Promise<{ maxWaiting: number; answeredWhileFull: number }> {
    const stack: RunningStack = await startStack({
      deps: { db: withSlowCounts(db), logger: silentLogger(), networks: new NetworkDirectory(db), production: false, ...(lane ? { expensiveLane: lane } : {}) },
      host: "127.0.0.1",
      port: 0,
      // One trusted proxy: each attacker names its own address, as clients behind nginx do.
      gateway: testGatewaySettings({ trustProxyHops: 1 }),
    });
    const post = async (query: string, variables: Record<string, unknown>, client: string) => {
      const response = await fetch(`${stack.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": client },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] };
    };
    let maxWaiting = 0;
    let sampler: NodeJS.Timeout | undefined;
    try {
      // Each attacker's own filter: identical calls in flight would be shared by the gateway (one count).
      const COUNT = `query ($from: UInt256!) { bets(first: 1, filter: { game: "dice", placedFrom: $from }) { totalCount } }`;
      let countsDone = 0;
      const attacks = Array.from({ length: ATTACKERS }, (_, i) => post(COUNT, { from: String(i + 1) }, `10.0.0.${i + 1}`).finally(() => countsDone++));
      const countsStarted = () => (lane ? lane.stats().running + lane.stats().waiting : db.poolStats!().total - db.poolStats!().idle + db.poolStats!().waiting);
      while (countsStarted() < (lane ? ATTACKERS : 5)) await new Promise((resolve) => setTimeout(resolve, 5));
      sampler = setInterval(() => (maxWaiting = Math.max(maxWaiting, db.poolStats!().waiting)), 2);

      const PAGE = `query ($w: Address!) { playerBets(wallet: $w, first: 20) { nodes { betId } } }`;
      let answeredWhileFull = 0;
      while (countsDone < ATTACKERS) {
        const { data, errors } = await post(PAGE, { w: fixtures.whale }, "10.0.1.1");
        expect(errors).toBeUndefined();
        expect((data?.playerBets as { nodes: unknown[] } | undefined)?.nodes.length).toBeGreaterThan(0);
        if (lane && lane.stats().running === LANE && lane.stats().waiting > 0) answeredWhileFull++;
      }
      for (const answer of await Promise.all(attacks)) expect(answer.errors).toBeUndefined();
      return { maxWaiting, answeredWhileFull };
    } finally {
      if (sampler) clearInterval(sampler);
      await stack.stop();
    }
  }

  it("without the lane, the same crowd takes the whole pool and cheap pages wait for a connection", async () => {
    const { maxWaiting } = await attack(undefined);
    expect(maxWaiting).toBeGreaterThan(0);
  });

  it("with it, cheap pages answer while the lane is full and never wait for a connection", async () => {
    const lane = new ExpensiveLane({ concurrency: LANE, perClient: 1, queueTimeoutMs: 120_000 });
    const { maxWaiting, answeredWhileFull } = await attack(lane);
    expect(answeredWhileFull).toBeGreaterThanOrEqual(3);
    expect(maxWaiting).toBe(0);
    expect(lane.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 });
  });
});

describe("a full lane past its queue deadline", () => {
  let db: TestDatabase;
  let stack: RunningStack;
  const lane = new ExpensiveLane({ concurrency: 2, perClient: 1, queueTimeoutMs: 200 });
  const COUNT = `{ bets(first: 1, filter: { game: "dice" }) { totalCount } }`;
  const ask = async (headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query: COUNT }),
    });
    return (await response.json()) as {
      data: { bets: unknown } | null;
      errors?: { message: string; path?: unknown[]; extensions?: Record<string, unknown> }[];
    };
  };
  /** Holds a slot of the lane as `client` until the returned function is called. */
  const hold = (client: string) => {
    let release: () => void = () => undefined;
    const held = lane.run(client, () => new Promise<void>((resolve) => (release = resolve)));
    return async () => {
      release();
      await held;
    };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    await seedFixtures(db, { bets: 40, proofCache: readProofCache() });
    stack = await startStack({
      deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: true, expensiveLane: lane },
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings({ production: true }),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  it("answers the expensive field SERVICE_BUSY with a retry hint", async () => {
    const releases = [hold("someone"), hold("someone else")];
    const refusedBefore = lane.stats().refused;
    try {
      const body = await ask();
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0]!.extensions).toMatchObject({ code: "SERVICE_BUSY", retryAfterSeconds: 1 });
      expect(body.errors![0]!.message).toMatch(/busy/);
      expect(body.errors![0]!.path).toEqual(["bets", "totalCount"]);
      expect(body.data).toBeNull(); // totalCount and bets are non-null: the error voids them up to data
      expect(lane.stats().refused).toBe(refusedBefore + 1);
    } finally {
      for (const release of releases) await release();
    }
  });

  it("shows the lane at the history subgraph's /metrics", async () => {
    const release = hold("someone");
    try {
      const text = await (await fetch(stack.subgraphUrls.history!.replace(/\/graphql$/, "/metrics"))).text();
      const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, "m").exec(text)?.[1] ?? Number.NaN);
      expect(value("expensive_lane_running")).toBe(1);
      expect(value("expensive_lane_waiting")).toBe(0);
      expect(value("expensive_lane_refused_total")).toBe(lane.stats().refused);
      expect(lane.stats().refused).toBeGreaterThan(0);
      if (db.poolStats) expect(value("db_pool_waiting")).toBe(0);
    } finally {
      await release();
    }
  });

  it("knows the client by the gateway's rule, not by a header the client sends", async () => {
    // The gateway trusts no proxy here: the client is the peer, 127.0.0.1, already at its share.
    const release = hold("127.0.0.1");
    try {
      const spoofed = await ask({ "x-client-address": "10.1.2.3", "x-forwarded-for": "10.1.2.4" });
      expect(spoofed.errors?.[0]?.extensions?.code).toBe("SERVICE_BUSY");
    } finally {
      await release();
    }
    // The lane has room for another client: the same request from the same peer now runs.
    const { data, errors } = await ask();
    expect(errors).toBeUndefined();
    expect(data?.bets).toEqual({ totalCount: expect.any(Number) });
  });
});

describe("the lane under its defaults", () => {
  let db: TestDatabase;
  let stack: RunningStack;
  let fixtures: FixtureSummary;
  const config = loadConfig(["shared"], {});
  const lane = new ExpensiveLane({
    concurrency: config.EXPENSIVE_LANE_CONCURRENCY,
    perClient: config.EXPENSIVE_LANE_PER_CLIENT,
    queueTimeoutMs: config.EXPENSIVE_LANE_QUEUE_TIMEOUT_MS,
  });
  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 120, proofCache: readProofCache() });
    stack = await startStack({
      deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false, expensiveLane: lane },
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings(),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  it("passes the issue's largest aliased request alone: nine filtered wallet counts, one client", async () => {
    const wallets = Array.from({ length: 9 }, (_, i) => fixtures.wallets[i % fixtures.wallets.length]!);
    expect(new Set(wallets).size).toBe(9); // nine different counts: none merged with another
    const aliases = wallets.map((wallet, i) => `w${i}: playerBets(wallet: "${wallet}", first: 1, filter: { game: "dice" }) { totalCount }`);
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ ${aliases.join("\n")} }` }),
    });
    const body = (await response.json()) as { data?: Record<string, { totalCount: number }>; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(Object.keys(body.data ?? {})).toHaveLength(9);
    expect(lane.stats().refused).toBe(0);
  });
});
