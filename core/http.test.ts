import http from "node:http";
import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { acceptsHtml, LISTEN_SOCKETS, listen, renderedBytesOf, reusePortSupported, stringifyAnswer } from "./http.ts";
import { runInRequestScope } from "./request-scope.ts";

// Graceful drain: a request already under way when the server closes still gets its answer;
// a new connection is refused.

describe("listen().close()", () => {
  it("lets an in-flight request finish and refuses new connections", async () => {
    let handling!: () => void;
    const handled = new Promise<void>((resolve) => (handling = resolve));
    const running = await listen(
      async (req, res) => {
        handling();
        let body = "";
        for await (const chunk of req) body += chunk;
        res.end(`got ${body.length}`);
      },
      "127.0.0.1",
      0,
    );

    const socket = net.connect(running.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
    // Under way: the handler runs (and waits for the rest of the body) before the server closes.
    await handled;

    const closed = running.close(5_000);
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(running.port, "127.0.0.1");
      probe.once("error", () => resolve(true));
      probe.once("connect", () => {
        probe.destroy();
        resolve(false);
      });
    });
    expect(refused).toBe(true);

    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    const ended = new Promise((resolve) => socket.once("close", resolve));
    socket.write("67890");
    await ended; // the server ends the connection after answering
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain("got 10");
    expect(answer.toLowerCase()).toContain("connection: close");
  });
});

describe("listen().close() with upgraded connections", () => {
  // An upgraded connection (a WebSocket: GATEWAY_SOCKETIO) is out of server.closeAllConnections()'s
  // reach, and ws holds one whose client never answers the closing handshake for 30 s: close() waited
  // that long, past a stopping process's deadline (bin/wiring.ts), or for ever for a socket nobody closes.
  it("ends them once the grace period is over, on whichever listening socket they came", async () => {
    const running = await listen((_req, res) => res.end(), "127.0.0.1", 0);
    running.server.on("upgrade", (_req, socket: net.Socket) => socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"));
    const clients = await Promise.all(
      Array.from({ length: 8 }, () => {
        const socket = net.connect(running.port, "127.0.0.1", () => socket.write("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"));
        socket.on("error", () => undefined);
        return new Promise<net.Socket>((resolve) => socket.once("data", () => resolve(socket)));
      }),
    );
    const started = performance.now();
    const closed = await Promise.race([running.close(200).then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 3_000))]);
    for (const socket of clients) socket.destroy();
    expect(closed).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe.runIf(reusePortSupported)("listen().close() on several listening sockets", () => {
  // A connection accepted by one of the extra listening sockets (SO_REUSEPORT) was not counted by
  // the server's close(): it resolved while such connections still had requests in flight, and a
  // gateway on SIGTERM exited without answering them (found by bin/shutdown-redis.pg.test.ts).
  it("resolves only once every request in flight, on whichever socket it came, is answered", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    const running = await listen(
      async (req, res) => {
        // Only requests that came through an extra listening socket stay in flight: the server's own has none.
        if ((req.socket as net.Socket & { _server?: unknown })._server === running.server) return res.end("answered");
        held++;
        await released;
        res.end("answered");
      },
      "127.0.0.1",
      0,
    );
    const request = () =>
      new Promise<{ answer: Promise<string> }>((resolve) => {
        let answer = "";
        const socket = net.connect(running.port, "127.0.0.1", () => socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        socket.on("error", () => undefined);
        socket.on("data", (chunk) => (answer += chunk.toString()));
        const closed = new Promise<string>((done) => socket.once("close", () => done(answer)));
        // Answered at once (the server's own socket) or held (an extra one): either way it has arrived.
        const seen = held;
        const check = setInterval(() => {
          if (held > seen || answer) {
            clearInterval(check);
            resolve({ answer: closed });
          }
        }, 5);
      });
    const answers: Promise<string>[] = [];
    for (let i = 0; i < 64 && held < 3; i++) answers.push((await request()).answer);
    expect(held).toBe(3);
    let closed = false;
    const closing = running.close(5_000).then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    release();
    await closing;
    for (const answer of await Promise.all(answers)) expect(answer).toMatch(/^HTTP\/1\.1 200[\s\S]*answered$/);
  });
});

describe("acceptsHtml (GraphiQL for browsers at the GraphQL path)", () => {
  it("is true only when text/html is asked for with a non-zero weight", () => {
    const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    expect([browser, "TEXT/HTML", "application/json, text/html;q=0.5"].map(acceptsHtml)).toEqual([true, true, true]);
    expect([undefined, "", "*/*", "application/json", "text/*", "text/html;q=0", "text/htmlx"].map(acceptsHtml)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("a route that fails while writing its head", () => {
  it("has its connection closed, not left hanging (found: HEAD of the CSV export announced a Trailer, and the error answer threw again)", async () => {
    const { ApolloServer } = await import("@apollo/server");
    const { createGraphQLRequestListener } = await import("./http.ts");
    const server = new ApolloServer({ typeDefs: "type Query { a: Int }" });
    const listener = createGraphQLRequestListener({
      server,
      context: async () => ({}),
      maxBodyBytes: 1024,
      routes: {
        "/boom": async (_req, res) => {
          res.setHeader("trailer", "x-status"); // refused by Node when writing a head without chunked encoding
          res.writeHead(200);
          res.end();
        },
      },
    });
    const running = await listen(listener, "127.0.0.1", 0);
    try {
      const outcome = await new Promise<string>((resolve) => {
        const req = http.request(`${running.url}/boom`, { method: "HEAD" }, (res) => {
          res.resume();
          res.on("end", () => resolve(`status ${res.statusCode}`));
        });
        req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
        req.end();
      });
      expect(outcome).toMatch(/^(status 500|ECONNRESET)$/);
    } finally {
      await running.close(0);
    }
  }, 10_000);
});

describe("stringifyAnswer (Apollo Server's stringifyResult, written as bytes)", () => {
  const values = [
    { data: { a: 1, b: ["x", null] } },
    { errors: [{ message: "m", path: ["a"] }], data: { a: null }, extensions: { cost: { requested: 1, actual: 1 } } },
    { data: { "\u2028": "é\u0000 € 🎲" } },
  ];

  it("writes what Apollo Server's default writes, and keeps its UTF-8 for that string once, in its request", () => {
    runInRequestScope("r1", () => {
      for (const value of values) {
        const text = stringifyAnswer(value);
        expect(text).toBe(`${JSON.stringify(value)}\n`);
        expect(renderedBytesOf(`${text} `)).toBeUndefined();
        expect(renderedBytesOf(text)).toEqual(Buffer.from(text));
        expect(renderedBytesOf(text)).toBeUndefined(); // handed out once
      }
    });
  });

  it("keeps nothing outside a request", () => {
    const text = stringifyAnswer(values[0]);
    expect(text).toBe(`${JSON.stringify(values[0])}\n`);
    expect(renderedBytesOf(text)).toBeUndefined();
  });
});

// Found by bench/abuse.ts (issue 21): as every attacker started, nginx opened hundreds of new
// upstream connections to the gateway while its event loop was busy. Node's default accept queue
// (511) overflowed and the kernel dropped the rest of the SYNs, so each of those requests, honest
// ones included, waited a SYN retransmission (1 s, then 3 s, 7 s …) before the gateway even saw it.

/** How many TCP sockets to `port` on loopback are still in SYN_SENT (/proc/net/tcp state 02): a connection whose SYN was dropped. */
function synSentTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[2]?.endsWith(`:${hexPort}`) && fields[3] === "02").length;
}

describe.runIf(process.platform === "linux")("listen()'s accept queue", () => {
  it("holds a burst of connections beyond Node's default backlog (511) that arrives while the event loop is busy, rather than dropping their SYNs", async () => {
    const running = await listen((_req, res) => res.end("ok"), "127.0.0.1", 0);
    const burst = 1_000;
    const sockets: net.Socket[] = [];
    try {
      // Every connect() is issued on the next tick, before this process's loop can accept any of
      // them: the kernel completes each loopback handshake into the accept queue, or drops the SYN
      // once the queue is full.
      for (let i = 0; i < burst; i++) sockets.push(net.connect(running.port, "127.0.0.1").on("error", () => undefined));
      await new Promise((resolve) => process.nextTick(resolve));
      expect(synSentTo(running.port)).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await running.close(0);
    }
  });
});

// Found by bench/abuse.ts (issue 21), with the backlog above: Node (libuv ≥ 1.45) accepts one
// connection per listening socket per event-loop turn, so a busy gateway took new connections a
// few dozen a second while nginx opened hundreds, and honest requests riding them waited seconds.
describe("listen()'s listening sockets (SO_REUSEPORT)", () => {
  it("accepts LISTEN_SOCKETS connections of a burst in one event-loop turn, not one (one socket on Node without reusePort)", async () => {
    const running = await listen((_req, res) => res.end("ok"), "127.0.0.1", 0);
    let accepted = 0;
    running.server.on("connection", () => accepted++);
    const sockets: net.Socket[] = [];
    try {
      const nextCheckPhase = () => new Promise((resolve) => setImmediate(resolve));
      // From a turn's check phase: connected on the next tick, before the next poll phase can accept any
      // (the kernel spreads them over the sockets); the next check phase comes after that one poll.
      await nextCheckPhase();
      for (let i = 0; i < 64; i++) sockets.push(net.connect(running.port, "127.0.0.1").on("error", () => undefined));
      await nextCheckPhase();
      expect(accepted).toBe(reusePortSupported ? LISTEN_SOCKETS : 1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await running.close(0);
    }
  });

  it("refuses a second server on a port already served (EADDRINUSE), as a server without SO_REUSEPORT would, instead of sharing its connections", async () => {
    const first = await listen((_req, res) => res.end("first"), "127.0.0.1", 0);
    try {
      await expect(listen((_req, res) => res.end("second"), "127.0.0.1", first.port)).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await first.close(0);
    }
  });
});

describe("requests Node's HTTP parser refuses", () => {
  /** Writes `raw` to a fresh connection and reads until the server closes it. */
  async function exchange(port: number, raw: string): Promise<string> {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.write(raw);
    await new Promise<void>((resolve, reject) => {
      socket.once("close", () => resolve());
      socket.once("error", reject);
      socket.setTimeout(10_000, () => reject(new Error("no answer within 10 s")));
    });
    return Buffer.concat(chunks).toString("utf8");
  }

  // Node answers these itself with a bare status line (no body, no code, no CORS): a browser client
  // could not tell a header too large from a network failure.
  it.each([
    ["headers larger than Node's bound", `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`, 431, "REQUEST_HEADERS_TOO_LARGE"],
    ["a request line that is not HTTP", "HELLO\r\n\r\n", 400, "BAD_REQUEST"],
  ])("%s: answered in the API's error shape", async (_name, raw, status, code) => {
    const running = await listen((_req, res) => res.end("ok"), "127.0.0.1", 0);
    try {
      const answer = await exchange(running.port, raw);
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      expect(head.split("\r\n")[0]).toBe(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`);
      expect(head.toLowerCase()).toContain("access-control-allow-origin: *");
      expect(head.toLowerCase()).toContain("content-type: application/json; charset=utf-8");
      const parsed = JSON.parse(body) as { errors: { message: string; extensions: { code: string } }[] };
      expect(parsed.errors[0]?.extensions.code).toBe(code);
      expect(parsed.errors[0]?.message.length).toBeGreaterThan(10);
    } finally {
      await running.close();
    }
  });
});
