import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_SECTIONS, gatewaySettings } from "../bin/wiring.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { loadConfig } from "../core/config.ts";
import type { Database, ReadStatement } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { type FixtureSummary, seedFixtures } from "../fixtures/seed.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";

// The gateway's fair share (gateway/fair-share.ts) through the real gateway, wired from the
// configuration as bin/gateway.ts wires it, with one operation at a time. A wallet page's statement
// is held in the database while the test says so: the operation holding the one slot, and those
// behind it waiting in the queue exactly as behind a slow subgraph. The database also records whose
// wallet page each statement read, in order: the order the queue admitted them.

let db: TestDatabase;
let fixtures: FixtureSummary;
const stacks: RunningStack[] = [];

/** Wallet pages read (their wallet), in order; while `held`, each waits for the gate. */
const pagesRead: string[] = [];
let pagesEntered = 0;
let openGate: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
const closeGate = () => {
  gate = new Promise((resolve) => (openGate = resolve));
};

/** The database, with the history subgraph's wallet page statements recorded and held at the gate. */
function gatedDatabase(database: Database): Database {
  const read = async <Row>(statement: ReadStatement, values: readonly unknown[]): Promise<Row[]> => {
    if (statement.name.startsWith("history-bet-page")) {
      const wallet = fixtures.wallets.find((w) => values.some((value) => String(value).toLowerCase() === w.toLowerCase()));
      pagesEntered++;
      await gate;
      pagesRead.push(wallet ?? "?");
    }
    return database.read<Row>(statement, values);
  };
  return new Proxy(database, { get: (target, property) => (property === "read" ? read : Reflect.get(target, property, target)) });
}

async function startGateway(env: Record<string, string>): Promise<RunningStack> {
  const config = loadConfig(GATEWAY_SECTIONS, { RESPONSE_CACHE: "off", RATE_LIMIT_MAX_IN_FLIGHT: "0", ...env });
  const gated = gatedDatabase(db);
  const stack = await startStack({
    deps: { db: gated, logger: silentLogger(), networks: new NetworkDirectory(gated), production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: gatewaySettings(config, { logger: silentLogger() }),
  });
  stacks.push(stack);
  return stack;
}

beforeAll(async () => {
  db = await createTestDatabase();
  fixtures = await seedFixtures(db, { bets: 60, proofCache: readProofCache() });
}, 120_000);

afterAll(async () => {
  openGate();
  for (const stack of stacks) await stack.stop();
  await db?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** One GraphQL POST from a loopback address of its own (node:http honours localAddress). */
function post(stack: RunningStack, localAddress: string, query: string): Promise<Answer> {
  const url = new URL(stack.url);
  const text = JSON.stringify({ query });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: "/graphql", method: "POST", localAddress, agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

const walletPage = (wallet: string) => `{ playerBets(wallet: "${wallet}", first: 1) { nodes { betId } } }`;
/** Two aliased counts under a time filter: 4 014 points each time (docs/reference/limits.md, worked examples). */
const AGGREGATE = `{ bets(first: 1, filter: { placedFrom: "1700000000", placedTo: "1800000000" }) { a: totalCount b: totalCount } }`;

async function waitingIn(stack: RunningStack): Promise<number> {
  const text = await (await fetch(`${stack.url}/metrics`)).text();
  return Number(/^gateway_fair_share_waiting(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

describe("the gateway's fair share", () => {
  it("admits a client that spent little before the queued requests of one that spent much, whatever their order of arrival", async () => {
    const stack = await startGateway({ FAIR_SHARE_CONCURRENCY: "1", FAIR_SHARE_QUEUE_TIMEOUT_MS: "60000" });
    const [holder, heavy, light] = [fixtures.wallets[1]!, fixtures.wallets[2]!, fixtures.wallets[3]!];

    // The heavy client spends most of its budget first (nothing waits yet).
    for (let i = 0; i < 2; i++) expect((await post(stack, "127.0.0.3", AGGREGATE)).status).toBe(200);

    closeGate();
    pagesRead.length = 0;
    const entered = pagesEntered;
    const held = post(stack, "127.0.0.2", walletPage(holder));
    await eventually(() => pagesEntered > entered, 10_000, "the holder's statement at the gate");
    const heavies = [1, 2, 3].map(() => post(stack, "127.0.0.3", walletPage(heavy)));
    await eventually(async () => (await waitingIn(stack)) === 3, 10_000, "the heavy client's three requests queued");
    const lighter = post(stack, "127.0.0.4", walletPage(light));
    await eventually(async () => (await waitingIn(stack)) === 4, 10_000, "the light client's request queued behind them");

    openGate();
    for (const answer of await Promise.all([held, ...heavies, lighter])) expect(answer.status).toBe(200);
    expect(pagesRead).toEqual([holder, light, heavy, heavy, heavy]);
  });

  it("refuses a request still waiting at the deadline SERVICE_BUSY, HTTP 429 (not a 503 a proxy counts as a failed upstream), with Retry-After and the budget's headers", async () => {
    const stack = await startGateway({ FAIR_SHARE_CONCURRENCY: "1", FAIR_SHARE_QUEUE_TIMEOUT_MS: "200" });
    closeGate();
    const entered = pagesEntered;
    const held = post(stack, "127.0.0.5", walletPage(fixtures.wallets[1]!));
    await eventually(() => pagesEntered > entered, 10_000, "the holder's statement at the gate");

    const refused = await post(stack, "127.0.0.6", walletPage(fixtures.wallets[2]!));
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers["ratelimit-limit"]).toBe("10000");
    expect(refused.headers["ratelimit-remaining"]).toMatch(/^\d+$/);
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: "SERVICE_BUSY", retryAfterSeconds: 1 });
    expect(refused.body.errors?.[0]?.message).toMatch(/busy .*no turn within 200 ms/);
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_fair_share_refused_total(?:\{[^}]*\})? 1$/m);

    openGate();
    expect((await held).status).toBe(200);
    // The slot is free again: the refused client is served at once.
    expect((await post(stack, "127.0.0.6", walletPage(fixtures.wallets[2]!))).status).toBe(200);
  });
});
