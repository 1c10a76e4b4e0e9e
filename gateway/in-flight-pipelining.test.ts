import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Registry } from "prom-client";
import { listen } from "../core/http.ts";
import { afterEach, describe, expect, it } from "vitest";
import { createInFlightCap, type InFlightCap, type InFlightSettings } from "./in-flight.ts";

// The door (gateway/in-flight.ts) under pipelined requests: answers on one connection are written in
// order, so a request's end (and its 429) may wait behind another's. A real HTTP server on loopback
// whose handler, as core/http.ts does, passes the door, then reads the request's body, then holds its
// answer until the test lets it go. Each case makes its own door; its bound (`maxWaitMs`) is the only clock.

/** Polls: what the test waits for (a request at the door, waiting or gone) has no event of its own. */
const until = async (ready: () => boolean) => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
};

interface Door {
  door: InFlightCap;
  port: number;
  ran: string[];
  release: (path: string) => Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A door in front of a handler that reads the whole body after the door (core/http.ts's order), then holds its answer. */
async function serveBehind(settings: InFlightSettings, registry = new Registry()): Promise<Door> {
  const door = createInFlightCap(settings, registry);
  const ran: string[] = [];
  const holds = new Map<string, () => void>();
  const server = createServer(async (req, res) => {
    if (!(await door.admit(req, res))) return;
    try {
      for await (const _chunk of req) {
        // core/http.ts's readBody: the body is read past the door
      }
    } catch {
      return; // the client left while sending its body
    }
    const path = req.url ?? "";
    ran.push(path);
    await new Promise<void>((resolve) => holds.set(path, resolve));
    if (!res.closed) res.end(path);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const release = async (path: string) => {
    await until(() => holds.has(path));
    holds.get(path)?.();
  };
  return { door, port: (server.address() as AddressInfo).port, ran, release };
}

describe("a turn's bound under pipelining", () => {
  it("never runs a request already answered 429 for its wait, though its answer waits behind another on the connection", async () => {
    // The guard `res.writableEnded` in the waiter's `gone` is what keeps it from running: a pipelined
    // request's 429 is queued behind the answer before it, so its `close` (which takes it out of the
    // queue) comes only after that answer ends, and that end gives out the turn first.
    const registry = new Registry();
    const { door, port, ran, release } = await serveBehind({ maxPerClient: 4, runningPerClient: 1, maxWaitMs: 100, trustProxyHops: 0 }, registry);
    const socket = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.80" });
    socket.on("error", () => {});
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("utf8");
    });
    socket.write(["/t1", "/t2"].map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""));
    await until(() => ran.includes("/t1") && door.waiting("127.0.0.80") === 1);
    const refusedForWait = async () => (await registry.getSingleMetricAsString("gateway_refusals_total")).includes('reason="turn_wait"} 1');
    while (!(await refusedForWait())) await new Promise((resolve) => setTimeout(resolve, 5));
    await release("/t1");
    await until(() => door.open("127.0.0.80") === 0);
    expect(ran).not.toContain("/t2");
    expect(received).toMatch(/HTTP\/1\.1 200[\s\S]*HTTP\/1\.1 429/);
    socket.destroy();
  });
});

describe("pipelined requests at the door (core/http.ts's listen)", () => {
  it("does not warn of an EventEmitter leak when a client pipelines as many requests as it may have open", async () => {
    // whenEnded adds a `close` listener to the connection per request open on it; with the write
    // deadline's and Node's own, 8 pipelined requests (RATE_LIMIT_MAX_IN_FLIGHT) pass Node's default
    // of 10, and any client can make every gateway print "Possible EventEmitter memory leak
    // detected" to stderr, once per connection, outside the pino logs.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const door = createInFlightCap({ maxPerClient: 8, runningPerClient: 2, maxWaitMs: 600_000, trustProxyHops: 0 }, new Registry());
    const ended: string[] = [];
    const running = await listen(
      async (req, res) => {
        if (!(await door.admit(req, res))) return;
        ended.push(req.url ?? "");
        res.end("ok");
      },
      "127.0.0.1",
      0,
    );
    try {
      const socket = connect({ host: "127.0.0.1", port: running.port, localAddress: "127.0.0.70" });
      socket.on("error", () => {});
      socket.on("data", () => {});
      socket.write(Array.from({ length: 8 }, (_, i) => `GET /p${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""));
      await until(() => ended.length === 8);
      socket.destroy();
      await until(() => door.open("127.0.0.70") === 0);
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
      expect(warnings.filter((warning) => warning.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await running.close(0);
    }
  });
});
