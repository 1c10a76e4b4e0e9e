import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInFlightCap, type InFlightCap } from "./in-flight.ts";

// Turns at the door (gateway/in-flight.ts): of a client's open requests at most `runningPerClient`
// run; the rest wait, in order, for one of that client's own to end, and other clients never wait
// on them. A real HTTP server on loopback whose handler runs only past the door and then holds its
// answer until the test lets it go, so the test knows exactly which requests ran.

const MAX = 4;
const RUNNING = 2;

let cap: InFlightCap;
let server: Server;
let port = 0;
/** Paths of the requests that got past the door, in the order they did. */
const ran: string[] = [];
const holds = new Map<string, () => void>();
/** Polls: what the test waits for (a request at the door, waiting or gone) has no event of its own. */
const until = async (ready: () => boolean) => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** A server on loopback whose handler runs past `door` only, then holds its answer until released. */
async function serveBehind(door: InFlightCap): Promise<{ server: Server; port: number }> {
  const server = createServer(async (req, res) => {
    if (!(await door.admit(req, res))) return;
    const path = req.url ?? "";
    ran.push(path);
    await new Promise<void>((resolve) => holds.set(path, resolve));
    if (!res.closed) res.end(path);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

beforeAll(async () => {
  cap = createInFlightCap({ maxPerClient: MAX, runningPerClient: RUNNING, trustProxyHops: 0 }, new Registry());
  ({ server, port } = await serveBehind(cap));
});
afterAll(async () => {
  for (const release of holds.values()) release();
  await new Promise((resolve) => server.close(resolve));
});

/** A request from `address` to `path` on its own connection; `answer` is its status and body. */
function send(address: string, path: string, to = port) {
  const req = request({ host: "127.0.0.1", port: to, path, localAddress: address, agent: false });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
  req.end();
  return { req, answer };
}

const release = async (path: string) => {
  await until(() => holds.has(path));
  holds.get(path)?.();
};

describe("turns at the door", () => {
  it("runs a client's first requests, keeps the rest waiting in order for its own to end, and never holds another client", async () => {
    const a: ReturnType<typeof send>[] = [];
    for (const [i, path] of ["/a1", "/a2", "/a3", "/a4"].entries()) {
      a.push(send("127.0.0.2", path));
      await until(() => cap.open("127.0.0.2") === i + 1); // one at a time: their order at the door is known
    }
    expect(ran).toEqual(["/a1", "/a2"]);
    expect(cap.waiting("127.0.0.2")).toBe(2);

    // The cap counts waiting requests: the fifth is refused at once.
    expect((await send("127.0.0.2", "/a5").answer).status).toBe(429);
    // Another client runs at once, beside the two running and the two waiting.
    const b = send("127.0.0.3", "/b1");
    await until(() => ran.includes("/b1"));
    await release("/b1");
    expect(await b.answer).toEqual({ status: 200, body: "/b1" });

    // One of the client's own ends: its oldest waiting request runs, then the next.
    await release("/a2");
    await until(() => ran.length === 4);
    expect(ran).toEqual(["/a1", "/a2", "/b1", "/a3"]);
    expect(cap.waiting("127.0.0.2")).toBe(1);
    await release("/a1");
    await until(() => ran.length === 5);
    expect(ran[4]).toBe("/a4");
    for (const path of ["/a3", "/a4"]) await release(path);
    expect((await Promise.all(a.map((r) => r.answer))).map((r) => r.body)).toEqual(["/a1", "/a2", "/a3", "/a4"]);
    await until(() => cap.open("127.0.0.2") === 0);
  });

  it("drops a request that leaves while it waits: it never runs, and its place goes to the next", async () => {
    const before = ran.length;
    const running = [send("127.0.0.4", "/c1"), send("127.0.0.4", "/c2")];
    await until(() => cap.open("127.0.0.4") === 2 && ran.length === before + 2);
    const leaver = send("127.0.0.4", "/c3");
    leaver.answer.catch(() => {}); // its socket is destroyed: the client sees an error, as it asked
    await until(() => cap.waiting("127.0.0.4") === 1);
    const stayer = send("127.0.0.4", "/c4");
    await until(() => cap.waiting("127.0.0.4") === 2);
    leaver.req.destroy();
    await until(() => cap.waiting("127.0.0.4") === 1 && cap.open("127.0.0.4") === 3);

    await release(ran[before]!);
    await until(() => ran.includes("/c4"));
    expect(ran).not.toContain("/c3");
    for (const path of ["/c1", "/c2", "/c4"]) await release(path);
    expect((await Promise.all([...running, stayer].map((r) => r.answer))).map((r) => r.status)).toEqual([200, 200, 200]);
    await until(() => cap.open("127.0.0.4") === 0);
    expect(cap.waiting("127.0.0.4")).toBe(0);
  });

  it("frees the slots of pipelined requests when their connection dies, though Node closes only the first one's answer", async () => {
    const socket = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.5" });
    socket.on("error", () => {});
    socket.write(["/p1", "/p2", "/p3"].map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""));
    await until(() => cap.open("127.0.0.5") === 3 && cap.waiting("127.0.0.5") === 1);
    socket.destroy();
    // Before, /p2 stayed running and /p3 waiting for good: every later request from the address hung.
    await until(() => cap.open("127.0.0.5") === 0);
    expect(cap.waiting("127.0.0.5")).toBe(0);
    expect(ran).not.toContain("/p3");
    const after = send("127.0.0.5", "/p4");
    await until(() => ran.includes("/p4"));
    await release("/p4");
    expect((await after.answer).status).toBe(200);
  }, 20_000);
});

describe("a bounded wait for a turn", () => {
  it("answers a request that waited its whole bound 429, and the running ones go on", async () => {
    // The bound keeps a waiting request inside Node's request timeout (a body over 16 KiB is not read
    // while it waits: 408) and nginx's proxy_read_timeout (a GET past it is sent to another gateway).
    const bounded = createInFlightCap({ maxPerClient: MAX, runningPerClient: 1, maxWaitMs: 200, trustProxyHops: 0 }, new Registry());
    const { server: boundedServer, port: boundedPort } = await serveBehind(bounded);
    try {
      const running = send("127.0.0.6", "/w1", boundedPort);
      running.answer.catch(() => {}); // reset by the finally below if an expectation fails first
      await until(() => ran.includes("/w1"));
      const waiting = send("127.0.0.6", "/w2", boundedPort);
      waiting.answer.catch(() => {});
      const answered = await waiting.answer; // before, it waited for good (the test timed out)
      expect(answered.status).toBe(429);
      expect(JSON.parse(answered.body).errors[0]).toMatchObject({
        message: expect.stringMatching(/waited .* for a turn/),
        extensions: { code: "RATE_LIMITED", retryAfterSeconds: 1 },
      });
      expect(ran).not.toContain("/w2");
      expect(bounded.open("127.0.0.6")).toBe(1);
      await release("/w1");
      expect((await running.answer).status).toBe(200);
      await until(() => bounded.open("127.0.0.6") === 0);
    } finally {
      boundedServer.closeAllConnections();
      await new Promise((resolve) => boundedServer.close(resolve));
    }
  });
});
