// Admission at the handshake, on real nodes and real sockets: sockets per client address (on a
// node, across two nodes sharing Redis, and with Redis away), the node's socket cap, its memory
// budget, and the client address behind trusted proxies. Other client addresses are real too:
// loopback's 127.0.0.x, bound with the ws client's `localAddress`.
import http from "node:http";
import { io as ioClient } from "socket.io-client";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createRedisClient, guardRedis } from "../core/redis.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { createPrivateRedis, type PrivateRedis } from "../test/private-redis.ts";
import { attemptConnect, type ConnectAttempt, type TypedClientSocket } from "../test/realtime.ts";
import { privateRedisServer, serviceTitle, skipWithout } from "../test/services.ts";
import { DEFAULT_ADMISSION } from "./admission.ts";
import { createRedisSocketCounter } from "./admission-redis.ts";
import type { ConnectErrorData } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createNodeMetrics } from "./metrics.ts";
import { createRealtime, type Realtime, type RealtimeDeps } from "./server.ts";

const PATH = "/ws";
const logger = silentLogger();
let db: TestDatabase;
const cleanups: (() => Promise<void>)[] = [];
const sockets: TypedClientSocket[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await db?.close();
});

interface Node {
  url: string;
  realtime: Realtime;
}

async function startNode(deps: Partial<RealtimeDeps> = {}): Promise<Node> {
  const server = http.createServer();
  const realtime = await createRealtime(server, { db, logger, fanout: createMemoryFanout(), path: PATH, ...deps });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await realtime.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, realtime };
}

async function attempt(node: Node, options: Parameters<typeof attemptConnect>[2] = {}): Promise<ConnectAttempt> {
  const result = await attemptConnect(node.url, PATH, options);
  sockets.push(result.socket);
  return result;
}

/** Waits until the node holds no raw connection beyond its sockets (the refused ones are closed). */
async function settled(node: Node): Promise<void> {
  await eventually(
    () => node.realtime.io.engine.clientsCount === node.realtime.io.of("/").sockets.size,
    10_000,
    () => `refused connections to close (${node.realtime.io.engine.clientsCount} open, ${node.realtime.io.of("/").sockets.size} sockets)`,
  );
}

const refusal = (result: ConnectAttempt): ConnectErrorData | undefined => (result.admitted ? undefined : (result.data as ConnectErrorData));

describe("sockets per client address on one node", () => {
  it("500 sockets from one address: the default allowance is admitted, every other refused TOO_MANY_CONNECTIONS with a retry hint; another address still connects", async () => {
    const node = await startNode();
    const allowance = DEFAULT_ADMISSION.maxSocketsPerAddress;
    const results: ConnectAttempt[] = [];
    // In waves, each let settle: the refused connections are closed by the node before the next.
    for (let wave = 0; wave < 500 / 25; wave++) {
      results.push(...(await Promise.all(Array.from({ length: 25 }, () => attempt(node)))));
      await settled(node);
    }
    const admitted = results.filter((r) => r.admitted);
    const refused = results.filter((r) => !r.admitted);
    expect(admitted).toHaveLength(allowance);
    expect(refused).toHaveLength(500 - allowance);
    for (const result of refused) {
      expect(refusal(result)).toMatchObject({ code: "TOO_MANY_CONNECTIONS", retryAfterSeconds: expect.any(Number) });
      expect(refusal(result)!.retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(node.realtime.state().sockets).toBe(allowance);
    expect(node.realtime.admission().refusals.address).toBe(500 - allowance);
    const metrics = createNodeMetrics(node.realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
    const series = (await metrics.registry.getSingleMetric("realtime_admission_refusals_total")!.get()).values;
    expect(series.find((v) => v.labels.reason === "address")?.value).toBe(500 - allowance);
    expect(series.find((v) => v.labels.reason === "node")?.value).toBe(0);

    // Another client address has its own allowance.
    expect((await attempt(node, { localAddress: "127.0.0.2" })).admitted).toBe(true);
    // A socket that leaves gives its place back.
    admitted[0]!.socket.close();
    await eventually(() => node.realtime.state().sockets === allowance, 10_000, "the closed socket to leave");
    const again = await attempt(node);
    expect(again.admitted ? "admitted" : again).toBe("admitted");
    expect(refusal(await attempt(node))?.code).toBe("TOO_MANY_CONNECTIONS");
  });

  it.each([
    { bound: "per address", admission: { maxSocketsPerAddress: 2 }, addresses: 1 },
    // From six addresses, so that only the node's bound applies.
    { bound: "per node", admission: { maxSocketsPerAddress: 0, maxSockets: 2 }, addresses: 6 },
  ])("a bare engine.io flood past twice the allowance $bound is refused at the handshake", async ({ admission, addresses }) => {
    const node = await startNode({ admission });
    // Raw engine.io WebSocket sessions that never join a namespace (so never meet the middleware).
    const { WebSocket } = await import("ws");
    const port = new URL(node.url).port;
    const outcomes = await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) =>
          new Promise<"open" | "refused">((resolve) => {
            const localAddress = `127.0.0.${(i % addresses) + 1}`;
            const ws = new WebSocket(`ws://127.0.0.1:${port}${PATH}/?EIO=4&transport=websocket`, { localAddress });
            cleanups.push(async () => ws.terminate());
            ws.once("message", () => resolve("open"));
            ws.once("error", () => resolve("refused"));
            ws.once("unexpected-response", () => resolve("refused"));
          }),
      ),
    );
    expect(outcomes.filter((o) => o === "open")).toHaveLength(4);
  });
});

describe("refusals at the engine's handshake (the backstop)", () => {
  /** A bare engine.io handshake from `localAddress` over `transport`: its HTTP status, Retry-After and body when refused, "open" when admitted. */
  async function rawHandshake(node: Node, localAddress: string, transport: "websocket" | "polling") {
    const { WebSocket } = await import("ws");
    const port = new URL(node.url).port;
    const url = `127.0.0.1:${port}${PATH}/?EIO=4&transport=${transport}`;
    if (transport === "polling") {
      return new Promise<{ status: number; retryAfter?: string; body: string } | "open">((resolve, reject) => {
        http
          .get(`http://${url}`, { localAddress, agent: false }, (res) => {
            let body = "";
            res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
            res.on("end", () => resolve(res.statusCode === 200 ? "open" : { status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], body }));
          })
          .on("error", reject);
      });
    }
    return new Promise<{ status: number; retryAfter?: string; body: string } | "open" | "closed without an answer">((resolve) => {
      const ws = new WebSocket(`ws://${url}`, { localAddress });
      cleanups.push(async () => ws.terminate());
      ws.once("message", () => resolve("open"));
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined, body }));
      });
      ws.once("error", () => resolve("closed without an answer"));
    });
  }

  it.each(["websocket", "polling"] as const)(
    "over %s: every refusal is HTTP 429 with a code, a message and a retry hint, and is counted",
    async (transport) => {
      const node = await startNode({ admission: { maxSocketsPerAddress: 2 } });
      const outcomes = [];
      for (let i = 0; i < 6; i++) outcomes.push(await rawHandshake(node, "127.0.0.7", transport));
      expect(outcomes.filter((o) => o === "open")).toHaveLength(4);
      const refused = outcomes.filter((o) => o !== "open");
      expect(refused).toHaveLength(2);
      for (const answer of refused) {
        expect(answer).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/) });
        const body = JSON.parse((answer as { body: string }).body) as ConnectErrorData;
        expect(body).toMatchObject({
          code: "TOO_MANY_CONNECTIONS",
          message: expect.stringMatching(/./),
          retryAfterSeconds: Number((answer as { retryAfter: string }).retryAfter),
        });
      }
      expect(node.realtime.admission().refusals.address_connections).toBe(2);
      const metrics = createNodeMetrics(node.realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
      const series = (await metrics.registry.getSingleMetric("realtime_admission_refusals_total")!.get()).values;
      expect(series.find((v) => v.labels.reason === "address_connections")?.value).toBe(2);
    },
  );

  it("a node past twice its sockets answers NODE_FULL the same way", async () => {
    const node = await startNode({ admission: { maxSocketsPerAddress: 0, maxSockets: 1 } });
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await rawHandshake(node, `127.0.0.${i + 2}`, "websocket"));
    expect(outcomes.slice(0, 2)).toEqual(["open", "open"]);
    expect(outcomes[2]).toMatchObject({ status: 429 });
    expect(JSON.parse((outcomes[2] as { body: string }).body)).toMatchObject({ code: "NODE_FULL", retryAfterSeconds: expect.any(Number) });
    expect(node.realtime.admission().refusals.node_connections).toBe(1);
  });

  it.each(["websocket", "polling"] as const)(
    "over %s: a draining node answers new handshakes HTTP 503 with a retry hint and the same JSON, not engine.io's bare 400/403",
    async (transport) => {
      const node = await startNode();
      await node.realtime.drain(1_000);
      const answer = await rawHandshake(node, "127.0.0.8", transport);
      expect(answer).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/) });
      const body = JSON.parse((answer as { body: string }).body) as ConnectErrorData;
      expect(body).toMatchObject({
        code: "NODE_FULL",
        message: expect.stringMatching(/shutting down/),
        retryAfterSeconds: Number((answer as { retryAfter: string }).retryAfter),
      });
    },
  );
});

describe("the node's own bounds", () => {
  it("refuses NODE_FULL past its socket cap, whatever the address", async () => {
    const node = await startNode({ admission: { maxSockets: 3 } });
    for (const localAddress of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) expect((await attempt(node, { localAddress })).admitted).toBe(true);
    const full = await attempt(node, { localAddress: "127.0.0.5" });
    expect(refusal(full)).toMatchObject({ code: "NODE_FULL", retryAfterSeconds: expect.any(Number) });
    expect(node.realtime.admission().refusals.node).toBe(1);
  });

  it("refuses NODE_FULL while the process is past its memory budget, and admits again below it", async () => {
    let rss = 100;
    const node = await startNode({ admission: { maxMemoryBytes: 1_000 }, memoryBytes: () => rss });
    expect((await attempt(node)).admitted).toBe(true);
    rss = 1_001;
    const refused = await attempt(node);
    expect(refusal(refused)).toMatchObject({ code: "NODE_FULL" });
    expect(refusal(refused)!.message).toMatch(/memory/);
    expect(node.realtime.admission().refusals.memory).toBe(1);
    rss = 999;
    expect((await attempt(node)).admitted).toBe(true);
  });
});

describe("the client address behind proxies", () => {
  const forwarded = (chain: string) => ({ headers: { "x-forwarded-for": chain } });

  it("with a trusted hop, counts the address the proxy appended (never the client-written left end)", async () => {
    const node = await startNode({ admission: { maxSocketsPerAddress: 2 }, trustProxyHops: 1 });
    expect((await attempt(node, forwarded("203.0.113.1"))).admitted).toBe(true);
    expect((await attempt(node, forwarded("6.6.6.6, 203.0.113.1"))).admitted).toBe(true);
    expect(refusal(await attempt(node, forwarded("7.7.7.7, 203.0.113.1")))?.code).toBe("TOO_MANY_CONNECTIONS");
    // Another client behind the same proxy (the same peer address) has its own allowance.
    expect((await attempt(node, forwarded("203.0.113.2"))).admitted).toBe(true);
  });

  it("without a trusted hop, X-Forwarded-For is ignored: the peer is the client", async () => {
    const node = await startNode({ admission: { maxSocketsPerAddress: 2 } });
    expect((await attempt(node, forwarded("203.0.113.1"))).admitted).toBe(true);
    expect((await attempt(node, forwarded("203.0.113.2"))).admitted).toBe(true);
    expect(refusal(await attempt(node, forwarded("203.0.113.3")))?.code).toBe("TOO_MANY_CONNECTIONS");
  });
});

// A redis-server of this suite's own, so that it can be stopped under the nodes.
describe.skipIf(skipWithout(privateRedisServer))(serviceTitle("sockets per client address across the cluster", privateRedisServer), () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await createPrivateRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** A node counting the cluster's sockets in the shared Redis under `prefix`. */
  async function clusterNode(prefix: string, admission: RealtimeDeps["admission"]): Promise<Node> {
    const client = createRedisClient(redis.url, { logger, role: "test:admission", maxRetriesPerRequest: 1 });
    await client.ping(); // connected before the first handshake (a connection still opening counts as away)
    const guarded = guardRedis(client, { timeoutMs: 200, probeIntervalMs: 50 });
    const node = await startNode({
      admission,
      clusterCounter: (counts) => createRedisSocketCounter({ redis: guarded, prefix, nodeId: randomBytes(6).toString("hex"), logger, counts }),
    });
    cleanups.push(async () => client.disconnect());
    return node;
  }

  it("two nodes sharing Redis hold one address to the cluster's allowance; a socket leaving one node makes room on the other", async () => {
    const prefix = `test:admission:${randomBytes(6).toString("hex")}:`;
    const limits = { maxSocketsPerAddress: 3, maxSocketsPerAddressCluster: 4 };
    const a = await clusterNode(prefix, limits);
    const b = await clusterNode(prefix, limits);
    const onA = [await attempt(a), await attempt(a), await attempt(a)];
    expect(onA.every((r) => r.admitted)).toBe(true);
    expect((await attempt(b)).admitted).toBe(true);
    const refused = await attempt(b);
    expect(refusal(refused)).toMatchObject({ code: "TOO_MANY_CONNECTIONS", retryAfterSeconds: expect.any(Number) });
    expect(b.realtime.admission().refusals.address_cluster).toBe(1);
    // Another address is not affected.
    expect((await attempt(b, { localAddress: "127.0.0.2" })).admitted).toBe(true);

    onA[0]!.socket.close();
    await eventually(async () => (await attempt(b)).admitted, 10_000, "room on B once a socket left A");
  });

  it("with Redis away, each node still holds an address to its own allowance: never unlimited, never everyone refused", async () => {
    const prefix = `test:admission:${randomBytes(6).toString("hex")}:`;
    const node = await clusterNode(prefix, { maxSocketsPerAddress: 3, maxSocketsPerAddressCluster: 10 });
    expect((await attempt(node)).admitted).toBe(true);
    await redis.stop();
    try {
      expect((await attempt(node)).admitted).toBe(true);
      expect((await attempt(node)).admitted).toBe(true);
      expect(refusal(await attempt(node))?.code).toBe("TOO_MANY_CONNECTIONS");
      expect((await attempt(node, { localAddress: "127.0.0.2" })).admitted).toBe(true);
      expect(node.realtime.admission().clusterUnavailable).toBeGreaterThanOrEqual(3);
    } finally {
      await redis.start();
    }
  });
});

describe("a client that leaves while its handshake is being decided", () => {
  it("frees its slot: the address's allowance of one is there again for its next socket", async () => {
    // The cluster counter answers only when the test says so, after the client has gone.
    const pending: ((admitted: boolean) => void)[] = [];
    const node = await startNode({
      admission: { maxSocketsPerAddress: 1, maxSocketsPerAddressCluster: 5 },
      clusterCounter: () => ({
        admit: () => new Promise<boolean>((resolve) => pending.push(resolve)),
        record: () => undefined,
        close: async () => undefined,
      }),
    });
    const leaving = ioClient(node.url, { path: PATH, transports: ["websocket"], reconnection: false, forceNew: true });
    await eventually(
      () => pending.length === 1,
      10_000,
      () => "the handshake to reach the cluster counter",
    );
    leaving.close(); // the connection goes while the node still waits on the counter
    await eventually(
      () => node.realtime.io.engine.clientsCount === 0,
      10_000,
      () => "the leaving client's connection to close",
    );
    pending.shift()!(true);
    // The next socket of the same address: admitted when the first one's slot was freed.
    const next = attempt(node);
    await eventually(
      () => pending.length === 1,
      10_000,
      () => `the next handshake to reach the cluster counter (refused: ${JSON.stringify(node.realtime.admission().refusals)})`,
    );
    pending.shift()!(true);
    expect((await next).admitted, JSON.stringify(node.realtime.admission().refusals)).toBe(true);
  });
});
