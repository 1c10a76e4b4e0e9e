// Hostile input, generated, over every Socket.IO payload (the twin of gateway/fuzz.db.test.ts):
// `bets:subscribe` / `bets:unsubscribe` with wrong types, huge arrays, deep nesting, unicode,
// prototype keys, numbers past 2^256, bad addresses and checksums, binary, missing or extra
// acknowledgements; and protocol-level garbage over a raw WebSocket. Each refused payload gets the
// contract's error (`bets:error` + `{ error: { code, message } }`), protocol garbage a clean close;
// the node stays up, the fuzzed socket stays usable, and a well-behaved client on the same node gets
// every one of its updates throughout.
import http from "node:http";
import fc from "fast-check";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import type { BetsErrorPayload, SubscribedPayload } from "./events.ts";
import { createMemoryFanout } from "./fanout.ts";
import { createLocalLock } from "./lock.ts";
import { createPublisher, type Publisher } from "./publisher.ts";
import { createRealtime, type Realtime } from "./server.ts";
import { createNetworks, keepWriting, wallet, type Writer } from "../test/outbox.ts";
import { connectClient, seqs, type TestClient } from "../test/realtime.ts";

const PATH = "/ws";
const CONTRACT_CODES = new Set(["BAD_USER_INPUT", "TOO_MANY_SUBSCRIPTIONS", "RATE_LIMITED", "REPLAY_WINDOW_EXCEEDED"]);
const MAX_MESSAGE_BYTES = 16 * 1024;
const A = wallet(1);
const RUNS = 150;

let db: TestDatabase;
let server: http.Server;
let realtime: Realtime;
let publisher: Publisher;
let url: string;
let control: TestClient;
let controlSince: bigint;
let writer: Writer;

beforeAll(async () => {
  db = await createTestDatabase();
  await createNetworks(db, [1, 2]);
  const logger = silentLogger();
  const fanout = createMemoryFanout();
  server = http.createServer();
  // A high event rate, so that every generated payload reaches validation (the rate limit has its own tests).
  realtime = await createRealtime(server, { db, logger, fanout, path: PATH, limits: { eventsPerSecond: 100_000 } });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  publisher = createPublisher({ db, fanout, logger, lock: createLocalLock(), pollIntervalMs: 200, heartbeatMs: 200 });
  publisher.start();
  control = await connectClient(url, PATH);
  controlSince = BigInt(((await control.subscribe({ wallets: [A] })) as SubscribedPayload).seq);
  writer = keepWriting(db, { players: [A, wallet(2)], intervalMs: 50 });
});

afterAll(async () => {
  await writer?.stop();
  control?.close();
  await publisher?.stop();
  await realtime?.close();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
});

// ---------------------------------------------------------------------------------------------
// Payloads through socket.io-client
// ---------------------------------------------------------------------------------------------

const BIG = [1n << 256n, (1n << 256n) + 1n, 1n << 300n, -(1n << 256n)];
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(...BIG.map((n) => n.toString()), ...BIG.map((n) => Number(n)), 2 ** 53, 2 ** 53 + 2, -1, 0, 1e308),
  fc.constantFrom(
    "0x",
    `0X${"a".repeat(40)}`,
    `0x${"g".repeat(40)}`,
    `0x${"A".repeat(40)}`,
    "0xAbC0000000000000000000000000000000000001",
    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "0x70997970c51812dc3a010c7d01b50e0d17dc79c8 ",
    "\u0000",
    "１２３",
    "٣",
    "1e3",
    "01",
    "-0",
    "NaN",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
  ),
  fc.array(fc.string({ maxLength: 12 }), { maxLength: 300 }),
  fc.array(fc.record({ chainId: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), betId: fc.oneof(fc.string({ maxLength: 20 }), fc.integer()) }), {
    maxLength: 50,
  }),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  fc.jsonValue({ maxDepth: 8 }),
  fc.integer({ min: 100, max: 2_000 }).map((depth) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown),
  fc.constant(null),
  fc.boolean(),
);
const KEYS = ["wallets", "bets", "chainIds", "all", "sinceSeq", "wallet", "__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "🦄"];
// JSON.parse makes `__proto__` an own key, as the server's parser does with what a client sends.
const hostileObject = fc
  .array(fc.tuple(fc.constantFrom(...KEYS), hostileValue), { maxLength: 5 })
  .map((entries) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v, replacer) ?? "null"}`).join(",")}}`) as unknown);
const hostilePayload = fc.oneof(hostileObject, hostileValue, fc.constant(JSON.parse('{"__proto__":{"all":true,"polluted":1},"wallets":[]}') as unknown));

function replacer(_key: string, value: unknown): unknown {
  return Buffer.isBuffer(value) ? `b64:${value.toString("base64")}` : value;
}

type Ack = (response: unknown) => void;
interface RawEmitter {
  emit(event: string, ...args: unknown[]): void;
}

function expectContractAnswer(response: unknown, errors: BetsErrorPayload[], event: string, before: number): void {
  expect(typeof response).toBe("object");
  const body = response as { error?: { code: string; message: string } } & Partial<SubscribedPayload>;
  if (body.error) {
    expect(Object.keys(body)).toEqual(["error"]);
    expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
    expect(CONTRACT_CODES.has(body.error.code), `${body.error.code}: ${body.error.message}`).toBe(true);
    expect(body.error.message).not.toMatch(/prisma|postgres|pglite|\.ts:\d+|at [A-Za-z.]+ \(|stack/i);
    expect(errors.length).toBe(before + 1);
    expect(errors.at(-1)).toEqual({ ...body.error, event });
  } else {
    expect(Object.keys(body).sort()).toEqual(["all", "bets", "chainIds", "seq", "wallets"]);
    expect(typeof body.all).toBe("boolean");
    expect(body.seq).toMatch(/^(0|[1-9][0-9]*)$/);
    for (const w of body.wallets!) expect(w).toMatch(/^0x[0-9a-f]{40}$/);
    for (const c of body.chainIds!) expect([1, 2]).toContain(c);
  }
}

describe("fuzzed Socket.IO payloads", () => {
  it("bets:subscribe / bets:unsubscribe: the contract's error or a valid state, never a crash or pollution", async () => {
    const client = await connectClient(url, PATH);
    const answers = new Map<string, number>();
    try {
      const raw = client.socket as unknown as RawEmitter;
      await fc.assert(
        fc.asyncProperty(fc.constantFrom("bets:subscribe", "bets:unsubscribe"), hostilePayload, async (event, payload) => {
          fc.pre((JSON.stringify(payload, replacer)?.length ?? 0) < MAX_MESSAGE_BYTES - 1_024);
          const before = client.errors.length;
          const response = await new Promise<unknown>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no ack for ${event}`)), 20_000);
            raw.emit(event, payload, ((answer) => {
              clearTimeout(timer);
              resolve(answer);
            }) satisfies Ack);
          });
          await client.until(
            () => client.errors.length >= before + (response && typeof response === "object" && "error" in response ? 1 : 0),
            5_000,
            "bets:error",
          );
          expectContractAnswer(response, client.errors, event, before);
          const code = (response as { error?: { code: string } }).error?.code ?? "accepted";
          answers.set(code, (answers.get(code) ?? 0) + 1);
          expect(client.socket.connected).toBe(true);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          expect(({} as Record<string, unknown>).all).toBeUndefined();
        }),
        { numRuns: RUNS },
      );

      // Both outcomes were exercised, and every run reached the server.
      expect(answers.get("BAD_USER_INPUT") ?? 0).toBeGreaterThan(RUNS / 2);
      expect(answers.get("accepted") ?? 0).toBeGreaterThan(0);
      expect([...answers.values()].reduce((a, b) => a + b, 0)).toBe(RUNS);

      // Missing, misplaced and extra acknowledgements.
      const errorsBefore = client.errors.length;
      raw.emit("bets:subscribe", { wallets: [42] });
      await client.until(() => client.errors.length === errorsBefore + 1, 5_000, "bets:error without an ack");
      const ackOnly = await new Promise((resolve) => raw.emit("bets:unsubscribe", resolve));
      expect(ackOnly).toMatchObject({ error: { code: "BAD_USER_INPUT" } });
      const extra = await new Promise((resolve) => raw.emit("bets:subscribe", { all: true }, "extra", 42, resolve));
      expect(extra).toMatchObject({ error: { code: "BAD_USER_INPUT", message: expect.stringMatching(/extra arguments/) } });
      await client.until(() => client.errors.length === errorsBefore + 3, 5_000, "bets:error with extra arguments");
      expect(client.errors.slice(errorsBefore).map((e) => e.code)).toEqual(["BAD_USER_INPUT", "BAD_USER_INPUT", "BAD_USER_INPUT"]);

      // The state is exactly what clean requests make of it: nothing a hostile request left behind.
      expect(await client.unsubscribe({})).toMatchObject({ wallets: [], bets: [], chainIds: [], all: false });
      const state = await client.subscribe({ wallets: [A], chainIds: [1] });
      expect(state).toEqual({ wallets: [A], bets: [], chainIds: [1], all: false, seq: expect.stringMatching(/^[0-9]+$/) });
      const live = client.updates.length;
      await client.until(() => client.updates.slice(live).some((u) => u.bet.player === A), 10_000, "a live update after the fuzzing");
    } finally {
      client.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Protocol garbage over a raw WebSocket
// ---------------------------------------------------------------------------------------------

/** A raw engine.io / Socket.IO v4 connection, joined to the main namespace. */
async function rawSocket(): Promise<{ ws: WebSocket; frames: (string | Buffer)[]; closed: Promise<number> }> {
  const ws = new WebSocket(`${url.replace("http", "ws")}${PATH}/?EIO=4&transport=websocket`);
  const frames: (string | Buffer)[] = [];
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  ws.on("error", () => undefined);
  ws.on("message", (data, isBinary) => {
    const frame = isBinary ? Buffer.from(data as Buffer) : (data as Buffer).toString();
    frames.push(frame);
    if (frame === "2") ws.send("3"); // engine.io ping → pong
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send("40");
  const deadline = Date.now() + 10_000;
  while (!frames.some((f) => typeof f === "string" && f.startsWith("40"))) {
    if (Date.now() > deadline) throw new Error("no Socket.IO CONNECT answer");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { ws, frames, closed };
}

const garbage: fc.Arbitrary<string | Buffer> = fc
  .oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ maxLength: 200 }).map((s) => `42${s}`), // an EVENT packet with a malformed body
    fc.string({ maxLength: 200 }).map((s) => `4${s}`),
    fc.constantFrom(
      "42[bets:subscribe",
      '42["bets:subscribe",',
      "42{}",
      '42"x"',
      "42[]",
      "42[1,2]",
      '451-["bets:subscribe"]',
      "49",
      "4",
      "9",
      "7",
      "",
      "0",
      "1",
      "6",
      "4{}",
      "40/nope,",
      '42/nope,["bets:subscribe",{}]',
    ),
    fc.uint8Array({ minLength: 1, maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
    fc.constant(`42["bets:subscribe",{"wallets":["${"a".repeat(MAX_MESSAGE_BYTES)}"]}]`),
    fc.constant(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x41)),
  )
  .filter((frame) => !(typeof frame === "string" && frame.startsWith("41"))); // "41…" is the client leaving the namespace: not garbage

/** Sends one frame on a fresh raw connection and reports what became of the connection. */
async function sendGarbage(frame: string | Buffer): Promise<"closed" | "usable"> {
  const { ws, frames, closed } = await rawSocket();
  ws.send(frame);
  const outcome = await Promise.race([closed.then((code) => ({ code })), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300))]);
  if (outcome) {
    expect([1000, 1005, 1006, 1009]).toContain(outcome.code); // normal, none given, TCP closed, message too big
    return "closed";
  }
  // Still open: it must still answer a well-formed request (ack id 7) — or close cleanly now, for
  // a packet only wrong once the next frame arrives (a binary event whose attachment never comes).
  const seen = frames.length;
  ws.send('427["bets:subscribe",{"chainIds":[1]}]');
  const deadline = Date.now() + 5_000;
  while (!frames.slice(seen).some((f) => typeof f === "string" && f.startsWith("437["))) {
    if (ws.readyState === WebSocket.CLOSED) {
      expect([1000, 1005, 1006]).toContain(await closed);
      return "closed";
    }
    if (Date.now() > deadline) throw new Error(`no ack after ${JSON.stringify(String(frame).slice(0, 80))}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const answer = frames.slice(seen).find((f) => typeof f === "string" && f.startsWith("437[")) as string;
  expect(JSON.parse(answer.slice(3))).toMatchObject([{ chainIds: [1], all: false }]);
  ws.close();
  await closed;
  return "usable";
}

describe("protocol-level garbage", () => {
  it("frames the protocol tolerates leave the connection usable; oversize and malformed frames close it", async () => {
    // Deterministic on purpose: most random garbage closes the connection, so a random sample
    // alone cannot be relied on to cover both outcomes.
    for (const frame of ["3", '42["no:such:event",{}]', '42["bets:update",{"seq":"1"}]']) {
      expect(await sendGarbage(frame), frame).toBe("usable");
    }
    for (const frame of [Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x41), "42[bets:subscribe", "9", '42/nope,["bets:subscribe",{}]']) {
      expect(await sendGarbage(frame), String(frame).slice(0, 40)).toBe("closed");
    }
  });

  it("random garbage gets a clean close, or is ignored and the connection stays usable; the node stays up", async () => {
    await fc.assert(
      fc.asyncProperty(garbage, async (frame) => {
        expect(["closed", "usable"]).toContain(await sendGarbage(frame));
      }),
      { numRuns: 60 },
    );
    // The node is up, and the well-behaved client got every one of its updates, once, in order.
    const fresh = await connectClient(url, PATH);
    expect(await fresh.subscribe({ all: true })).toMatchObject({ all: true });
    fresh.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const upTo = control.updates.at(-1)?.seq;
    const expected = writer.written.filter((w) => w.seq > controlSince && w.player === A && (upTo === undefined || w.seq <= BigInt(upTo))).map((w) => w.seq);
    expect(expected.length).toBeGreaterThan(5);
    expect(seqs(control.updates)).toEqual(expected);
    expect(control.socket.connected).toBe(true);
  });
});
