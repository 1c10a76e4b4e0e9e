// The one suite every fan-out implementation passes (realtime/memory.db.test.ts and
// realtime/redis.db.test.ts run it, each on PGlite and on PostgreSQL). Node and publisher run in
// the test's process; with Redis they talk only through Redis (separate fan-out instances, as
// separate processes would). The multi-process scenarios (node killed, publisher failover) are in
// realtime/cluster.pg.test.ts.
import http from "node:http";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import type { Retention } from "../core/outbox.ts";
import type { BetUpdatePayload } from "../realtime/events.ts";
import { createMemoryFanout, createRedisFanout, type Fanout } from "../realtime/fanout.ts";
import { createLocalLock } from "../realtime/lock.ts";
import { createPublisher, type Publisher } from "../realtime/publisher.ts";
import { createRealtime, type Realtime, type RealtimeDeps } from "../realtime/server.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { createNetworks, insertUpdates, wallet, type TestUpdate } from "./outbox.ts";
import { connectClient, seqs, type TestClient } from "./realtime.ts";
import { testConfig } from "./config.ts";
import { redisService, serviceTitle, skipWithout } from "./services.ts";
import { conventionViolations } from "./stack.ts";

const REDIS_URL = testConfig.TEST_REDIS_URL;
const PATH = "/ws";
const A = wallet(1);
const B = wallet(2);
const C = wallet(3);

interface Env {
  db: TestDatabase;
  url: string;
  realtime: Realtime;
  publisher: Publisher;
  publisherFanout: Fanout;
  client(): Promise<TestClient>;
  write(updates: TestUpdate[]): Promise<bigint[]>;
}

const cleanups: (() => Promise<void>)[] = [];

interface EnvOptions {
  retention?: Partial<Retention>;
  limits?: RealtimeDeps["limits"];
  pollIntervalMs?: number;
  feedTimeoutMs?: number;
}

async function startEnv(kind: "memory" | "redis", options: EnvOptions = {}): Promise<Env> {
  const logger = silentLogger();
  const db = await createTestDatabase();
  cleanups.push(() => db.close());
  await createNetworks(db, [1, 2]);
  const prefix = `bets-test:${randomBytes(6).toString("hex")}:`;
  const nodeFanout = kind === "memory" ? createMemoryFanout() : createRedisFanout({ url: REDIS_URL, prefix, logger });
  const publisherFanout = kind === "memory" ? nodeFanout : createRedisFanout({ url: REDIS_URL, prefix, logger });
  cleanups.push(
    () => nodeFanout.close(),
    () => publisherFanout.close(),
  );

  const server = http.createServer();
  const realtime = await createRealtime(server, {
    db,
    logger,
    fanout: nodeFanout,
    path: PATH,
    retention: options.retention,
    limits: options.limits,
    feedTimeoutMs: options.feedTimeoutMs,
    localPollMs: 200,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await realtime.close();
    await new Promise((resolve) => server.close(resolve));
  });
  const poll = options.pollIntervalMs ?? 500;
  const publisher = createPublisher({ db, fanout: publisherFanout, logger, lock: createLocalLock(), pollIntervalMs: poll, heartbeatMs: Math.max(200, poll) });
  publisher.start();
  cleanups.push(() => publisher.stop());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    db,
    url,
    realtime,
    publisher,
    publisherFanout,
    async client() {
      const client = await connectClient(url, PATH);
      cleanups.push(async () => client.close());
      return client;
    },
    write: (updates) => insertUpdates(db, updates),
  };
}

function expectWireForms(updates: BetUpdatePayload[]): void {
  for (const update of updates) {
    expect(Object.keys(update).sort()).toEqual(["bet", "betId", "chainId", "seq", "type"]);
    expect(update.seq).toMatch(/^[1-9][0-9]*$/);
    expect(update.betId).toMatch(/^(0|[1-9][0-9]*)$/);
    expect(typeof update.chainId).toBe("number");
    expect(update.bet.betId).toBe(update.betId);
  }
  expect(conventionViolations(updates)).toEqual([]);
}

/**
 * Every update this node delivered came through the fan-out's feed (over Redis, with the Redis
 * fan-out), none from its outbox fallback: the local poll that delivers while the feed is down would
 * otherwise make a broken fan-out pass every delivery test.
 */
function expectCarriedByFeed(env: Env): void {
  expect(env.realtime.delivered()).toBeGreaterThan(0);
  expect(env.realtime.healed()).toBe(0);
  expect(env.realtime.state()).toMatchObject({ delivery: "feed", fanoutConnected: true });
}

function _expectStrictlyIncreasing(values: bigint[]): void {
  for (let i = 1; i < values.length; i++) expect(values[i]! > values[i - 1]!, `seq ${values[i]} after ${values[i - 1]}`).toBe(true);
}

/** The Redis of the tests, probed once: the Redis run of the suite is skipped (titled SKIPPED) without it, except under CI. */
const redisServer = await redisService(REDIS_URL);

export function realtimeSuite(kind: "memory" | "redis"): void {
  const needs = kind === "redis" ? [redisServer] : [];
  describe.skipIf(skipWithout(...needs))(serviceTitle(`realtime over the ${kind} fan-out`, ...needs), () => {
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    });

    it("delivers matching updates once, in seq order, in the contract's wire forms", async () => {
      const env = await startEnv(kind);
      const wallets = await env.client();
      const firehose = await env.client();
      const state = await wallets.subscribe({ wallets: [A.toUpperCase().replace("0X", "0x")], bets: [{ chainId: 1, betId: "7" }] });
      expect(state).toEqual({ wallets: [A], bets: [{ chainId: 1, betId: "7" }], chainIds: [], all: false, seq: "0" });
      expect(wallets.subscribed).toEqual([state]);
      await firehose.subscribe({ all: true });

      const big = ((1n << 256n) - 1n).toString();
      const written = await env.write([
        { chainId: 1, betId: "1", player: A },
        { chainId: 1, betId: "7", player: B },
        { chainId: 2, betId: big, player: A, type: "SETTLED" },
        { chainId: 1, betId: "8", player: C },
      ]);
      await firehose.until(() => firehose.updates.length === 4, 10_000, "the firehose");
      await wallets.until(() => wallets.updates.length === 3, 10_000, "wallet and bet updates");
      expect(seqs(firehose.updates)).toEqual(written);
      expect(seqs(wallets.updates)).toEqual([written[0], written[1], written[2]]);
      expect(wallets.updates[2]).toMatchObject({ type: "SETTLED", chainId: 2, betId: big, bet: { status: "SETTLED", player: A } });
      expectWireForms(firehose.updates);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(firehose.updates).toHaveLength(4);
      expect(wallets.updates).toHaveLength(3);
      expectCarriedByFeed(env);
    });

    it("sends an update that matches several subscriptions of a socket once", async () => {
      const env = await startEnv(kind);
      const overlapping = await env.client();
      await overlapping.subscribe({
        wallets: [A],
        bets: [
          { chainId: 1, betId: "10" },
          { chainId: 2, betId: "10" },
        ],
      });
      const narrowed = await env.client();
      await narrowed.subscribe({ wallets: [A, B], bets: [{ chainId: 1, betId: "10" }], chainIds: [1, 2] });
      const firehoseAndWallet = await env.client();
      await firehoseAndWallet.subscribe({ all: true, wallets: [A], bets: [{ chainId: 1, betId: "10" }] });

      const written = await env.write([
        { chainId: 1, betId: "10", player: A },
        { chainId: 2, betId: "10", player: A, type: "REFUNDED" },
        { chainId: 1, betId: "11", player: B },
      ]);
      await firehoseAndWallet.until(() => firehoseAndWallet.updates.length === 3);
      await narrowed.until(() => narrowed.updates.length === 3);
      await overlapping.until(() => overlapping.updates.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seqs(overlapping.updates)).toEqual([written[0], written[1]]);
      expect(seqs(narrowed.updates)).toEqual(written);
      expect(seqs(firehoseAndWallet.updates)).toEqual(written);
      expectCarriedByFeed(env);
    });

    it("narrows by chainIds; chainIds alone mean every bet of those chains", async () => {
      const env = await startEnv(kind);
      const chainOnly = await env.client();
      await chainOnly.subscribe({ chainIds: [2] });
      const walletOnChain = await env.client();
      await walletOnChain.subscribe({ wallets: [A], chainIds: [1] });
      const firehoseOnChain = await env.client();
      await firehoseOnChain.subscribe({ all: true, chainIds: [1] });

      const written = await env.write([
        { chainId: 1, betId: "1", player: A },
        { chainId: 2, betId: "2", player: A },
        { chainId: 2, betId: "3", player: B },
        { chainId: 1, betId: "4", player: B },
      ]);
      await chainOnly.until(() => chainOnly.updates.length === 2);
      await walletOnChain.until(() => walletOnChain.updates.length === 1);
      await firehoseOnChain.until(() => firehoseOnChain.updates.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seqs(chainOnly.updates)).toEqual([written[1], written[2]]);
      expect(seqs(walletOnChain.updates)).toEqual([written[0]]);
      expect(seqs(firehoseOnChain.updates)).toEqual([written[0], written[3]]);
      expectCarriedByFeed(env);
    });

    it("stops delivering after unsubscribe; {} ends everything", async () => {
      const env = await startEnv(kind);
      const client = await env.client();
      await client.subscribe({ wallets: [A, B], chainIds: [1] });
      await env.write([{ chainId: 1, betId: "1", player: B }]);
      await client.until(() => client.updates.length === 1);

      const after = await client.unsubscribe({ wallets: [B] });
      expect(after).toMatchObject({ wallets: [A], chainIds: [1], all: false });
      const [onlyA] = await env
        .write([
          { chainId: 1, betId: "2", player: B },
          { chainId: 1, betId: "3", player: A },
        ])
        .then((s) => [s[1]]);
      await client.until(() => client.updates.length === 2);
      expect(BigInt(client.updates[1]!.seq)).toBe(onlyA);

      expect(await client.unsubscribe({})).toEqual({ wallets: [], bets: [], chainIds: [], all: false, seq: expect.stringMatching(/^\d+$/) });
      await env.write([{ chainId: 1, betId: "4", player: A }]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(client.updates).toHaveLength(2);
      expectCarriedByFeed(env);
    });

    it("answers bad payloads with bets:error and an error ack, and the socket stays usable", async () => {
      const env = await startEnv(kind);
      const client = await env.client();
      const raw = client.socket as unknown as {
        emitWithAck(event: string, ...args: unknown[]): Promise<unknown>;
        emit(event: string, ...args: unknown[]): void;
      };
      const bad: [string, unknown, RegExp][] = [
        ["bets:subscribe", "not an object", /object/],
        ["bets:subscribe", null, /object/],
        ["bets:subscribe", [], /object/],
        ["bets:subscribe", { wallets: "0xabc" }, /wallets/],
        ["bets:subscribe", { wallets: ["0x123"] }, /wallets\[0\]/],
        ["bets:subscribe", { wallets: ["0xAbC0000000000000000000000000000000000001"] }, /EIP-55/],
        ["bets:subscribe", { bets: [{ chainId: 1, betId: 5 }] }, /bets\[0\]\.betId/],
        ["bets:subscribe", { bets: [{ chainId: 1, betId: "05" }] }, /betId/],
        ["bets:subscribe", { bets: [{ chainId: "1", betId: "5" }] }, /chainId/],
        ["bets:subscribe", { bets: [{ chainId: 1 }] }, /betId/],
        ["bets:subscribe", { chainIds: [0] }, /chainId/],
        ["bets:subscribe", { chainIds: [999] }, /Unknown chainId 999/],
        ["bets:subscribe", { all: "yes" }, /all/],
        ["bets:subscribe", { sinceSeq: 5 }, /sinceSeq/],
        ["bets:subscribe", { sinceSeq: "-1" }, /sinceSeq/],
        ["bets:subscribe", { wallet: [A] }, /wallet/],
        ["bets:unsubscribe", { sinceSeq: "1" }, /sinceSeq/],
        ["bets:unsubscribe", 42, /object/],
      ];
      for (const [event, payload, message] of bad) {
        const response = (await raw.emitWithAck(event, payload)) as { error: { code: string; message: string } };
        expect(response.error.code, JSON.stringify(payload)).toBe("BAD_USER_INPUT");
        expect(response.error.message).toMatch(message);
        await new Promise((resolve) => setTimeout(resolve, 60)); // stay under the rate limit
      }
      expect(client.errors).toHaveLength(bad.length);
      expect(client.errors[0]).toEqual({ code: "BAD_USER_INPUT", message: expect.any(String), event: "bets:subscribe" });
      expect(client.errors.at(-1)?.event).toBe("bets:unsubscribe");

      // Without an ack, and with the ack as the only argument.
      raw.emit("bets:subscribe", { wallets: [1] });
      await client.until(() => client.errors.length === bad.length + 1);
      const ackOnly = await new Promise((resolve) => raw.emit("bets:subscribe", resolve));
      expect(ackOnly).toMatchObject({ error: { code: "BAD_USER_INPUT" } });
      // Unknown events are ignored.
      raw.emit("bets:whatever", {});

      expect(client.socket.connected).toBe(true);
      expect(await client.subscribe({ wallets: [A] })).toMatchObject({ wallets: [A] });
      const [seq] = await env.write([{ chainId: 1, betId: "1", player: A }]);
      await client.until(() => client.updates.length === 1);
      expect(BigInt(client.updates[0]!.seq)).toBe(seq);
      expectCarriedByFeed(env);
    });

    it("enforces TOO_MANY_SUBSCRIPTIONS, RATE_LIMITED and the message size", async () => {
      const env = await startEnv(kind);
      const client = await env.client();
      const wallets = Array.from({ length: 150 }, (_, i) => wallet(1000 + i));
      expect(await client.subscribe({ wallets })).toMatchObject({ wallets: expect.any(Array) });
      const tooMany = await client.subscribe({ bets: Array.from({ length: 51 }, (_, i) => ({ chainId: 1, betId: String(i) })) });
      expect(tooMany).toEqual({ error: { code: "TOO_MANY_SUBSCRIPTIONS", message: expect.stringMatching(/200/) } });
      expect(client.errors.at(-1)).toMatchObject({ code: "TOO_MANY_SUBSCRIPTIONS", event: "bets:subscribe" });
      // 50 more fit exactly; the state is unchanged by the refusal.
      const full = await client.subscribe({ bets: Array.from({ length: 50 }, (_, i) => ({ chainId: 1, betId: String(i) })) });
      expect(full).toMatchObject({ wallets: expect.any(Array), bets: expect.any(Array) });
      if ("wallets" in full) expect(full.wallets.length + full.bets.length).toBe(200);

      // 20 events per second: a burst of 40 gets some RATE_LIMITED answers, and the socket lives on.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const burst = await Promise.all(Array.from({ length: 40 }, () => client.subscribe({})));
      const limited = burst.filter((r) => "error" in r && r.error.code === "RATE_LIMITED");
      expect(limited.length).toBeGreaterThanOrEqual(15);
      expect(client.errors.some((e) => e.code === "RATE_LIMITED")).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await client.subscribe({})).toMatchObject({ all: false });

      // A message above 16 KiB is refused by Socket.IO itself (the connection closes): the limit is on.
      const big = await env.client();
      const closed = new Promise((resolve) => big.socket.once("disconnect", resolve));
      (big.socket as unknown as { emit(event: string, payload: unknown): void }).emit("bets:subscribe", { padding: "x".repeat(17 * 1024) });
      expect(await closed).toBe("transport close");
    });

    it("replays from sinceSeq, then goes live with no gap and no duplicate while updates keep coming", async () => {
      const env = await startEnv(kind);
      const players = [A, B, C];
      const history = await env.write(Array.from({ length: 60 }, (_, i) => ({ chainId: 1 + (i % 2), betId: String(i), player: players[i % 3]! })));
      let writing = true;
      let n = 100;
      const writer = (async () => {
        while (writing) {
          await env.write([
            { chainId: 1 + (n % 2), betId: String(n), player: players[n % 3]! },
            { chainId: 1, betId: String(n + 1), player: players[(n + 1) % 3]! },
          ]);
          n += 2;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const resumes = [
        { since: history[9]!, request: { wallets: [A] } },
        { since: history[29]!, request: { all: true } },
        { since: 0n, request: { chainIds: [2] } },
        { since: history[59]!, request: { wallets: [B], bets: [{ chainId: 1, betId: "0" }] } },
      ];
      const clients = await Promise.all(resumes.map(() => env.client()));
      const acks = await Promise.all(clients.map((c, i) => c.subscribe({ ...resumes[i]!.request, sinceSeq: resumes[i]!.since.toString() })));
      await new Promise((resolve) => setTimeout(resolve, 400));
      writing = false;
      await writer;
      const head = (await env.db.prisma.betUpdate.aggregate({ _max: { seq: true } }))._max.seq!;
      const rows = await env.db.prisma.betUpdate.findMany({ orderBy: { seq: "asc" }, select: { seq: true, chainId: true, player: true, betId: true } });
      for (const [i, client] of clients.entries()) {
        const { since, request } = resumes[i]!;
        const ack = acks[i]!;
        expect("error" in ack, JSON.stringify(ack)).toBe(false);
        const expected = rows
          .filter((r) => r.seq > since)
          .filter((r) => {
            const chainId = Number(r.chainId);
            if ("chainIds" in request) return request.chainIds?.includes(chainId) ?? false;
            if ("all" in request) return true;
            return (
              request.wallets.includes(r.player) ||
              ("bets" in request && (request.bets ?? []).some((b) => b.chainId === chainId && b.betId === r.betId.toFixed(0)))
            );
          })
          .map((r) => r.seq);
        await client.until(
          () => client.updates.length >= expected.length && (client.updates.length === 0 || BigInt(client.updates.at(-1)!.seq) >= expected.at(-1)!),
          15_000,
          `resume ${i}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(seqs(client.updates), `resume ${i}`).toEqual(expected);
        expect(BigInt((ack as { seq: string }).seq) <= head).toBe(true);
      }
      expectWireForms(clients[1]!.updates);
    });

    it("refuses a sinceSeq outside the replay window with REPLAY_WINDOW_EXCEEDED", async () => {
      const env = await startEnv(kind, { retention: { maxUpdates: 10 } });
      const written = await env.write(Array.from({ length: 20 }, (_, i) => ({ chainId: 1, betId: String(i), player: A })));
      const client = await env.client();
      await client.subscribe({ wallets: [B] });
      expect(await client.subscribe({ wallets: [A], sinceSeq: written[5]!.toString() })).toEqual({
        error: { code: "REPLAY_WINDOW_EXCEEDED", message: expect.stringMatching(/10 updates/) },
      });
      expect(await client.subscribe({ wallets: [A], sinceSeq: "1000000" })).toMatchObject({ error: { code: "REPLAY_WINDOW_EXCEEDED" } });
      expect(await client.subscribe({ wallets: [A], sinceSeq: (1n << 200n).toString() })).toMatchObject({ error: { code: "REPLAY_WINDOW_EXCEEDED" } });
      expect(client.errors.map((e) => e.code)).toEqual(["REPLAY_WINDOW_EXCEEDED", "REPLAY_WINDOW_EXCEEDED", "REPLAY_WINDOW_EXCEEDED"]);
      // The refused resumes left the previous subscription live.
      const [seq] = await env.write([{ chainId: 1, betId: "100", player: B }]);
      await client.until(() => client.updates.length === 1);
      expect(BigInt(client.updates[0]!.seq)).toBe(seq);
      // Inside the window it replays: a resume restarts this socket's stream after sinceSeq (so B's
      // update comes again, in its place), then goes live.
      const ok = await client.subscribe({ wallets: [A], sinceSeq: written[12]!.toString() });
      expect(ok).toMatchObject({ wallets: [B, A], seq: seq!.toString() });
      expect(seqs(client.updates)).toEqual([seq, ...written.slice(13), seq]);
    });

    it("wakes the publisher on NOTIFY; the poll alone still delivers when notifications are lost", async () => {
      const env = await startEnv(kind, { pollIntervalMs: 60_000 });
      const client = await env.client();
      await client.subscribe({ all: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      const [first] = await env.write([{ chainId: 1, betId: "1", player: A }]);
      await client.until(() => client.updates.length === 1, 5_000, "an update woken by NOTIFY");
      expect(performance.now() - started).toBeLessThan(5_000);

      // A publisher whose LISTEN never fires: the slow poll is the safety net.
      await env.publisher.stop();
      const deaf: TestDatabase = { ...env.db, listen: async () => async () => undefined };
      const polling = createPublisher({
        db: deaf,
        fanout: env.publisherFanout,
        logger: silentLogger(),
        lock: createLocalLock(),
        pollIntervalMs: 300,
        heartbeatMs: 300,
      });
      polling.start();
      cleanups.push(() => polling.stop());
      const [second] = await env.write([{ chainId: 1, betId: "2", player: A }]);
      await client.until(() => client.updates.length === 2, 5_000, "an update found by the poll");
      expect(seqs(client.updates)).toEqual([first, second]);
    });

    it("reads updates the feed never brought from the outbox", async () => {
      const env = await startEnv(kind);
      await env.publisher.stop();
      const client = await env.client();
      await client.subscribe({ wallets: [A] });
      const written = await env.write([
        { chainId: 1, betId: "1", player: A },
        { chainId: 1, betId: "2", player: B },
        { chainId: 1, betId: "3", player: A },
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(client.updates).toHaveLength(0);
      // A heartbeat (what a new leader sends first) says the stream is at the newest seq.
      env.publisherFanout.publish({ prevSeq: written[2]!.toString(), updates: [] });
      await client.until(() => client.updates.length === 2, 10_000, "healed updates");
      expect(seqs(client.updates)).toEqual([written[0], written[2]]);
      expect(env.realtime.healed()).toBe(3);
      // A repeated batch (a publisher failing over mid-batch) is dropped.
      env.publisherFanout.publish({ prevSeq: "0", updates: client.updates.map((u) => ({ ...u, player: A })) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(client.updates).toHaveLength(2);
    });

    it("delivers from the outbox itself while the feed is silent, and goes back to the feed when it returns", async () => {
      const env = await startEnv(kind, { feedTimeoutMs: 1_000 });
      const client = await env.client();
      await client.subscribe({ wallets: [A] });
      const [first] = await env.write([{ chainId: 1, betId: "1", player: A }]);
      await client.until(() => client.updates.length === 1, 10_000, "an update through the feed");
      expect(env.realtime.state().delivery).toBe("feed");
      // Pub/Sub is at-most-once: the first update may itself have been healed (a message published
      // before this node's subscription was live), so count only what the silent feed forces.
      const healedBefore = env.realtime.healed();

      await env.publisher.stop(); // no publisher, no heartbeat: the feed falls silent
      const written = await env.write([
        { chainId: 1, betId: "2", player: A },
        { chainId: 1, betId: "3", player: B },
        { chainId: 1, betId: "4", player: A },
      ]);
      await client.until(() => client.updates.length === 3, 10_000, "updates read locally");
      expect(env.realtime.state().delivery).toBe("local");
      expect(env.realtime.healed() - healedBefore).toBe(3);

      const publisher = createPublisher({
        db: env.db,
        fanout: env.publisherFanout,
        logger: silentLogger(),
        lock: createLocalLock(),
        pollIntervalMs: 200,
        heartbeatMs: 200,
      });
      publisher.start();
      cleanups.push(() => publisher.stop());
      const [last] = await env.write([{ chainId: 1, betId: "5", player: A }]);
      await client.until(() => client.updates.length === 4, 10_000, "an update after the feed is back");
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(env.realtime.state().delivery).toBe("feed");
      expect(seqs(client.updates)).toEqual([first, written[0], written[2], last]);
    });
  });
}
