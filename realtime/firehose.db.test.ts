// The firehose bound (realtime/firehose.ts) on a real node and real sockets: a crowd of client
// addresses, each within its own socket allowance, cannot put more than the node's bound of
// firehose subscriptions (one delivery per socket per update) beyond each address's first on it,
// nor keep a newcomer's first out, while wallet and bet subscriptions keep working; each address
// has its share; a slot is given back when its socket unsubscribes or leaves. Addresses are loopback's 127.0.0.x, bound with the ws client's `localAddress`.
import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { REALTIME_SECTIONS, realtimeSettings } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { silentLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { eventually } from "../test/eventually.ts";
import { attemptConnect, type TypedClientSocket } from "../test/realtime.ts";
import { type ErrorBody, isErrorResponse, type Response, type SubscribedPayload, type SubscribeRequest } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createNodeMetrics } from "./metrics.ts";
import { createRealtime, type Realtime, type RealtimeDeps } from "./server.ts";

const PATH = "/ws";
const WALLET = "0x00000000000000000000000000000000000000aa";
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

async function startNode(deps: Partial<RealtimeDeps> = {}): Promise<{ url: string; realtime: Realtime }> {
  const server = http.createServer();
  const realtime = await createRealtime(server, { db, logger: silentLogger(), fanout: createMemoryFanout(), path: PATH, ...deps });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await realtime.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, realtime };
}

async function connect(url: string, localAddress: string): Promise<TypedClientSocket> {
  const attempt = await attemptConnect(url, PATH, { localAddress });
  sockets.push(attempt.socket);
  if (!attempt.admitted) throw new Error(`not admitted: ${attempt.message}`);
  return attempt.socket;
}

const subscribe = (socket: TypedClientSocket, request: SubscribeRequest): Promise<Response<SubscribedPayload>> => socket.emitWithAck("bets:subscribe", request);
const errorOf = (response: Response<SubscribedPayload>): ErrorBody | undefined => (isErrorResponse(response) ? response.error : undefined);

describe("firehose subscriptions on a node", () => {
  it("a crowd of addresses within their allowances: the node's bound (beyond each address's first) and each address's share hold, with a retry hint; wallets still follow", async () => {
    const node = await startNode({ firehose: { maxPerNode: 5, maxPerAddress: 2 } });
    const accepted: TypedClientSocket[] = [];
    const refused: { address: string; error: ErrorBody }[] = [];
    // Eight addresses, three firehose sockets each (the default allows 20 sockets per address).
    for (let a = 10; a < 18; a++) {
      const address = `127.0.0.${a}`;
      for (let i = 0; i < 3; i++) {
        const socket = await connect(node.url, address);
        const error = errorOf(await subscribe(socket, { all: true }));
        if (error) refused.push({ address, error });
        else accepted.push(socket);
      }
    }
    // Every address has its first; addresses 10–14 also a second (the node's 5 beyond the first ones).
    expect(accepted).toHaveLength(13);
    // Addresses 10–14: the third refused for the address's share.
    const byAddress = refused.filter((r) => r.error.code === "RATE_LIMITED");
    expect(byAddress.map((r) => r.address)).toEqual(["127.0.0.10", "127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"]);
    for (const { error } of byAddress) {
      expect(error.retryAfterSeconds).toBeGreaterThan(0);
      expect(error.message).toMatch(/at most 2 firehose subscriptions per client address/i);
    }
    // Addresses 15–17: their second and third refused, the node is full beyond first ones.
    const byNode = refused.filter((r) => r.error.code === "SERVICE_UNAVAILABLE");
    expect(byNode.map((r) => r.address)).toEqual(["127.0.0.15", "127.0.0.15", "127.0.0.16", "127.0.0.16", "127.0.0.17", "127.0.0.17"]);
    for (const { error } of byNode) {
      expect(error.retryAfterSeconds).toBeGreaterThan(0);
      expect(error.message).toMatch(/most firehose subscriptions \(5 beyond one per client address/);
    }
    expect(refused).toHaveLength(11);

    // The node still serves wallets and bets to anyone, a firehose-refused address included; a
    // refused firehose leaves the subscription as it was.
    const walletSocket = await connect(node.url, "127.0.0.15");
    expect(errorOf(await subscribe(walletSocket, { wallets: [WALLET] }))).toBeUndefined();
    const refusedAll = await subscribe(walletSocket, { all: true });
    expect(errorOf(refusedAll)?.code).toBe("SERVICE_UNAVAILABLE");
    const state = await subscribe(walletSocket, {}); // adds nothing: the state as it is
    expect(isErrorResponse(state) ? state : { wallets: state.wallets, all: state.all }).toEqual({ wallets: [WALLET], all: false });

    expect(node.realtime.firehose()).toEqual({ subscriptions: 13, refusals: { node: 7, address: 5 } });
    const metrics = createNodeMetrics(node.realtime, { kind: "memory", connected: () => true }, { defaultMetrics: false });
    expect((await metrics.registry.getSingleMetric("realtime_firehose_subscriptions")!.get()).values[0]?.value).toBe(13);
    const series = (await metrics.registry.getSingleMetric("realtime_firehose_refusals_total")!.get()).values;
    expect(series.find((v) => v.labels.reason === "node")?.value).toBe(7);
    expect(series.find((v) => v.labels.reason === "address")?.value).toBe(5);

    // A slot beyond the first ones comes back when its socket unsubscribes...
    const secondOf10 = accepted[1]!; // 127.0.0.10's second
    expect(errorOf(await subscribe(secondOf10, { wallets: [WALLET] }))).toBeUndefined(); // still the firehose: `all` narrows nothing
    expect(node.realtime.firehose().subscriptions).toBe(13);
    await secondOf10.emitWithAck("bets:unsubscribe", {});
    expect(node.realtime.firehose().subscriptions).toBe(12);
    const late = await connect(node.url, "127.0.0.16");
    expect(errorOf(await subscribe(late, { all: true }))).toBeUndefined();
    // ...or leaves (127.0.0.11's first: its second becomes its first, and a slot frees).
    accepted[2]!.close();
    await eventually(() => node.realtime.firehose().subscriptions === 12, 10_000, "the closed socket's slot to come back");
    expect(errorOf(await subscribe(await connect(node.url, "127.0.0.17"), { all: true }))).toBeUndefined();
    expect(node.realtime.firehose().subscriptions).toBe(13);
    expect(errorOf(await subscribe(await connect(node.url, "127.0.0.17"), { all: true }))?.code).toBe("RATE_LIMITED");
  });

  it("a crowd that fills the node's bound does not keep a newcomer's first firehose out (live page, waitForBet)", async () => {
    const node = await startNode({ firehose: { maxPerNode: 4, maxPerAddress: 8 } });
    // Two addresses take every slot the bound has, and more.
    for (let i = 0; i < 8; i++) await subscribe(await connect(node.url, "127.0.0.30"), { all: true });
    for (let i = 0; i < 8; i++) await subscribe(await connect(node.url, "127.0.0.31"), { all: true });
    expect(node.realtime.firehose().subscriptions).toBe(6);
    // Newcomers, each with its first firehose: served; a second one of theirs is not.
    for (const address of ["127.0.0.32", "127.0.0.33", "127.0.0.34"]) {
      expect(errorOf(await subscribe(await connect(node.url, address), { all: true }))).toBeUndefined();
    }
    expect(errorOf(await subscribe(await connect(node.url, "127.0.0.32"), { all: true }))?.code).toBe("SERVICE_UNAVAILABLE");
    expect(node.realtime.firehose().subscriptions).toBe(9);
  });

  it("a resume of the firehose (sinceSeq) beyond an address's first takes a slot too; refused, it leaves the subscription unchanged", async () => {
    const node = await startNode({ firehose: { maxPerNode: 1, maxPerAddress: 0 } });
    const address = "127.0.0.20";
    const first = await connect(node.url, address);
    const head = await first.emitWithAck("bets:unsubscribe", {});
    const since = isErrorResponse(head) ? "0" : head.seq;
    expect(errorOf(await subscribe(first, { all: true, sinceSeq: since }))).toBeUndefined();
    const second = await connect(node.url, address);
    expect(errorOf(await subscribe(second, { all: true, sinceSeq: since }))).toBeUndefined(); // the one beyond the first
    const third = await connect(node.url, address);
    expect(errorOf(await subscribe(third, { wallets: [WALLET] }))).toBeUndefined();
    expect(errorOf(await subscribe(third, { all: true, sinceSeq: since }))?.code).toBe("SERVICE_UNAVAILABLE");
    const state = await subscribe(third, {});
    expect(isErrorResponse(state) ? state : state.wallets).toEqual([WALLET]);
    // The second one's resume holds the slot; once it goes, the third may resume.
    second.close();
    await eventually(() => node.realtime.firehose().subscriptions === 1, 10_000, "the second socket's slot to come back");
    expect(errorOf(await subscribe(third, { all: true, sinceSeq: since }))).toBeUndefined();
    expect(node.realtime.firehose()).toEqual({ subscriptions: 2, refusals: { node: 1, address: 0 } });
  });

  it("is configured by REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS and REALTIME_MAX_FIREHOSE_PER_ADDRESS", () => {
    const settings = (env: Record<string, string>) => realtimeSettings(loadConfig(["shared", ...REALTIME_SECTIONS], env)).firehose;
    expect(settings({})).toEqual({ maxPerNode: 256, maxPerAddress: 8 });
    expect(settings({ REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS: "0", REALTIME_MAX_FIREHOSE_PER_ADDRESS: "1" })).toEqual({ maxPerNode: 0, maxPerAddress: 1 });
  });
});
