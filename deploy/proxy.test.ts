// The production reverse proxy, run for real: Debian's nginx with deploy/nginx.conf (only the
// upstream addresses, the listen address and nginx's own file paths rewritten for loopback) in
// front of two running gateways and two realtime nodes, as in docker-compose.yml. GraphQL,
// /health and Socket.IO WebSockets go through it; /metrics does not. A caller's request id and
// trace context pass (or fresh ones are made) and are logged; WebSocket clients stay on one node
// by address; a gateway that dies with a request in flight costs no honest request.
import { readFileSync } from "node:fs";
import { createServer, Agent as HttpAgent, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { insertUpdates, wallet } from "../test/outbox.ts";
import { attemptConnect, connectClient, type TestClient } from "../test/realtime.ts";
import { describeWith } from "../test/services.ts";
import { nginxBinary, startNginx, type RunningNginx } from "../test/nginx.ts";
import { startTestStack, testGatewaySettings, type TestStack } from "../test/stack.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { eventually } from "../test/eventually.ts";
import { testRealtimeSettings } from "../test/config.ts";
import { loadCompose } from "../test/compose.ts";
import { REALTIME_PATH } from "../realtime/events.ts";

/** The realtime node's allowance per client address in this suite (small: quick to reach). */
const SOCKETS_PER_ADDRESS = 3;
/** The Socket.IO path of the compose file's realtime nodes. */
const REALTIME_NODE_PATH = loadCompose().services["realtime-a"]!.environment!.REALTIME_PATH!;

/** The headers a gateway received, as a test route on both gateways answers them. */
const ECHO_PATH = "/test-echo-headers";
const echoHeaders = (req: IncomingMessage, res: ServerResponse) => {
  res
    .writeHead(200, { "content-type": "application/json" })
    .end(JSON.stringify({ requestId: req.headers["x-request-id"], traceparent: req.headers.traceparent }));
};

/** A long answer (as a whale's CSV export) on both gateways: written as fast as the connection takes it, its bytes counted. */
const LONG_PATH = "/test-long-answer";
const LONG_CHUNK = Buffer.alloc(64 * 1024, 0x61);
/** The most the route writes (a bound on what the old configuration spooled to nginx's disk in this test). */
const LONG_MAX_BYTES = 256 * 1024 * 1024;
let longWritten = 0;
/** The route's latest answer, as the gateway holds it. */
let longResponse: ServerResponse | undefined;
const longAnswer = (_req: IncomingMessage, res: ServerResponse) => {
  longResponse = res;
  res.writeHead(200, { "content-type": "text/csv" });
  const pump = () => {
    while (longWritten < LONG_MAX_BYTES && !res.destroyed) {
      longWritten += LONG_CHUNK.length;
      if (!res.write(LONG_CHUNK)) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
};

describeWith(nginxBinary, "deploy/nginx.conf in front of the services", () => {
  let t: TestStack;
  /** gateway-b: a second gateway of its own over the same database and subgraphs (gateway-a is t's). */
  let gatewayB: RunningStack;
  const realtimeHttp: Server[] = [];
  const realtime: RunningRealtime[] = [];
  let nginx: RunningNginx;
  let proxyUrl: string;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    t = await startTestStack({}, { web: { routes: { [ECHO_PATH]: echoHeaders, [LONG_PATH]: longAnswer } } });
    gatewayB = await startStack({
      deps: { db: t.db, logger: silentLogger(), networks: new NetworkDirectory(t.db), production: false },
      host: "127.0.0.1",
      port: 0,
      gateway: { ...testGatewaySettings(), routes: { [ECHO_PATH]: echoHeaders, [LONG_PATH]: longAnswer } },
    });
    for (let i = 0; i < 2; i++) {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      realtimeHttp.push(server);
      realtime.push(
        await startRealtime(server, {
          db: t.db,
          logger: silentLogger(),
          // As the compose nodes behind the proxy: the client is the last X-Forwarded-For hop.
          settings: testRealtimeSettings({
            REALTIME_TRANSPORTS: "websocket",
            REALTIME_PATH: REALTIME_NODE_PATH,
            TRUST_PROXY_HOPS: "1",
            REALTIME_MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
          }),
        }),
      );
    }

    nginx = await startNginx({ gatewayPorts: [t.stack.http.port, gatewayB.http.port], realtimePorts: realtimePorts() });
    proxyUrl = nginx.url;
  });

  const realtimePorts = () => realtimeHttp.map((server) => (server.address() as { port: number }).port) as [number, number];

  afterAll(async () => {
    for (const client of clients) client.close();
    await nginx?.stop();
    for (const node of realtime) await node.stop();
    for (const server of realtimeHttp) await new Promise((resolve) => server.close(resolve));
    await gatewayB?.stop().catch(() => undefined); // already crashed by the failover test
    await t?.close();
  });

  it("serves GraphQL, /health and the schema through the proxy", async () => {
    const response = await fetch(`${proxyUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ networkConfigs { chainId name } }" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{16,}$/);
    const body = (await response.json()) as { data: { networkConfigs: { chainId: number }[] } };
    expect(body.data.networkConfigs.map((n) => n.chainId)).toEqual(t.fixtures.networks.map((n) => n.chainId).sort((a, b) => a - b));
    const health = (await (await fetch(`${proxyUrl}/health`)).json()) as { status: string };
    expect(["OK", "DEGRADED"]).toContain(health.status);
    expect(await (await fetch(`${proxyUrl}/schema.graphql`)).text()).toContain("type Query");
  });

  it("does not spool a long answer its client never reads: the gateway's writes wait, as its write deadline expects", async () => {
    // A CSV export the client never reads: nginx used to read it from the gateway into a temp file
    // (up to 1 GB per request), so the gateway exported pages as fast as its points budget allowed,
    // for nobody, and its write deadline never saw the stall. In memory buffers only, nginx takes
    // what the client's socket takes, and the gateway's write waits.
    longWritten = 0;
    longResponse = undefined;
    const request = httpRequest(`${proxyUrl}${LONG_PATH}`, { agent: false });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      request.on("response", resolve).on("error", reject);
    });
    request.end();
    const response = await answered;
    response.pause(); // never reads
    try {
      expect(response.statusCode).toBe(200);
      // Whatever the machine's speed: wait until the gateway's writes stop (nothing written for a
      // second), then look at how much they wrote. Spooled, they only stop at the route's 256 MB.
      let seen = -1;
      let stillFor = 0;
      while (stillFor < 5) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        stillFor = longWritten === seen ? stillFor + 1 : 0;
        seen = longWritten;
      }
      // Stopped because the write waits for the reader, not because nginx gave up on it: the
      // gateway still holds the answer open, its last write waiting for a drain.
      // (Read through a cast: the route's handler set it, which TypeScript's narrowing cannot see.)
      const held = longResponse as ServerResponse | undefined;
      expect(held?.destroyed).toBe(false);
      expect(held?.writableEnded).toBe(false);
      expect(held?.writableNeedDrain).toBe(true);
    } finally {
      request.destroy();
    }
    // Loopback socket buffers on both sides of nginx and its proxy buffers hold a few MB at most.
    expect(longWritten).toBeGreaterThan(0);
    expect(longWritten).toBeLessThan(32 * 1024 * 1024);
  }, 120_000);

  it("keeps /metrics internal", async () => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${proxyUrl}/metrics`)).status).toBe(404);
  });

  it("refuses bodies over the limit at the proxy", async () => {
    const response = await fetch(`${proxyUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ networkConfigs { name } } # ${"x".repeat(70 * 1024)}` }),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toContain("text/html"); // nginx's page: the gateway never saw it
  });

  it("upgrades Socket.IO WebSockets on the live page's path and delivers updates through the proxy", async () => {
    // The page (and `npm start`) use /socket.io; the compose realtime nodes serve that path.
    expect(REALTIME_NODE_PATH).toBe(REALTIME_PATH.gateway);
    expect(readFileSync("web/page/main.ts", "utf8")).toContain(`const SOCKET_PATH = "${REALTIME_PATH.gateway}";`);
    const client = await connectClient(proxyUrl, REALTIME_NODE_PATH);
    clients.push(client);
    expect(client.socket.io.engine.transport.name).toBe("websocket");
    const state = await client.subscribe({ all: true });
    expect(state).toMatchObject({ all: true });
    const chainId = t.fixtures.networks[0]!.chainId;
    const [seq] = await insertUpdates(t.db, [{ chainId, betId: "900001", player: wallet(1) }]);
    await client.until(() => client.updates.some((u) => u.seq === String(seq)), 15_000, "the update through the proxy");
    expect(client.updates.find((u) => u.seq === String(seq))).toMatchObject({ type: "PLACED", chainId, betId: "900001" });
  });

  it("lets the realtime node count sockets per client behind it, whatever X-Forwarded-For a client writes", async () => {
    // Before: every socket came from nginx's address, so one client's flood was everyone's.
    const from = (localAddress: string, spoof: string) =>
      attemptConnect(proxyUrl, REALTIME_NODE_PATH, { localAddress, headers: { "x-forwarded-for": spoof } }).then((attempt) => {
        clients.push({ close: () => void attempt.socket.close() } as TestClient);
        return attempt;
      });
    for (let i = 0; i < SOCKETS_PER_ADDRESS; i++) expect((await from("127.0.0.3", `198.51.100.${i}`)).admitted).toBe(true);
    const refused = await from("127.0.0.3", "198.51.100.99");
    expect(refused.admitted ? "admitted" : refused.data).toMatchObject({ code: "TOO_MANY_CONNECTIONS" });
    expect((await from("127.0.0.4", "198.51.100.0")).admitted).toBe(true);
  });

  it("refuses a handshake over its own per-address bound with the nodes' code and retry hint", async () => {
    // The shipped configuration with limit_conn 1 (40 in production, above the nodes' own
    // allowance, which answers first): one socket held, the next handshake from that address.
    const strict = await startNginx({ gatewayPorts: [t.stack.http.port, t.stack.http.port], realtimePorts: realtimePorts() }, { socketsPerAddress: 1 });
    try {
      const held = await connectClient(strict.url, REALTIME_NODE_PATH, { localAddress: "127.0.0.60" });
      clients.push(held);
      const refusal = await new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
        const request = httpRequest(`${strict.url}${REALTIME_NODE_PATH}/?EIO=4&transport=websocket`, {
          localAddress: "127.0.0.60",
          headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
        });
        request.once("upgrade", (_response, socket) => {
          socket.destroy();
          reject(new Error("nginx let a second socket of the address through"));
        });
        request.once("response", (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], body: Buffer.concat(chunks).toString("utf8") }),
          );
        });
        request.once("error", reject);
        request.end();
      });
      expect(refusal.status).toBe(429);
      expect(refusal.retryAfter).toBe("30");
      expect(JSON.parse(refusal.body)).toEqual({ code: "TOO_MANY_CONNECTIONS", message: expect.any(String), retryAfterSeconds: 30 });
    } finally {
      await strict.stop();
    }
  });

  const accessLog = () => nginx.accessLog();

  it("keeps a caller's valid X-Request-Id and traceparent, makes fresh ones otherwise, and logs both", async () => {
    const echo = async (headers: Record<string, string>) => {
      const response = await fetch(`${proxyUrl}${ECHO_PATH}`, { headers });
      expect(response.status).toBe(200);
      return (await response.json()) as { requestId: string; traceparent: string };
    };
    const callerTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const kept = await echo({ "x-request-id": "partner-req.42", traceparent: callerTrace });
    expect(kept).toEqual({ requestId: "partner-req.42", traceparent: callerTrace });

    const badHeaders: Record<string, string>[] = [
      { "x-request-id": "two words", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7" },
      { "x-request-id": "x".repeat(65), traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" },
      {},
    ];
    for (const bad of badHeaders) {
      const fresh = await echo(bad);
      expect(fresh.requestId).toMatch(/^[0-9a-f]{32}$/);
      // A new trace whose id is the request id, so one id finds the request in every log and trace.
      expect(fresh.traceparent).toBe(`00-${fresh.requestId}-${fresh.requestId.slice(0, 16)}-01`);
    }
    await eventually(() => accessLog().some((line) => line.requestId === "partner-req.42"), 5_000, "the access log line");
    expect(accessLog().find((line) => line.requestId === "partner-req.42")).toMatchObject({ uri: ECHO_PATH, status: 200, traceparent: callerTrace });
  });

  it("answers its own /livez and a gateway's /readyz", async () => {
    const live = await fetch(`${proxyUrl}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ALIVE" });
    const ready = await fetch(`${proxyUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "READY", reasons: [] });
  });

  it("keeps a client address on one realtime node and spreads addresses over both", async () => {
    const socketsPerNode = () => realtime.map((node) => node.realtime.state().sockets);
    const before = socketsPerNode();
    const connectFrom = async (localAddress: string) => {
      const client = await connectClient(proxyUrl, REALTIME_NODE_PATH, { localAddress });
      clients.push(client);
      return client;
    };
    // One address, several sockets (Socket.IO long-polling would need this): one node holds them all.
    for (let i = 0; i < SOCKETS_PER_ADDRESS; i++) await connectFrom("127.0.0.20");
    const afterOne = socketsPerNode().map((n, i) => n - before[i]!);
    expect(afterOne.sort()).toEqual([0, SOCKETS_PER_ADDRESS]);
    // Many addresses: both nodes take some (two real backends, not one twice).
    const start = socketsPerNode();
    for (let i = 30; i < 46; i++) await connectFrom(`127.0.0.${i}`);
    const spread = socketsPerNode().map((n, i) => n - start[i]!);
    expect(spread.reduce((a, b) => a + b, 0)).toBe(16);
    expect(Math.min(...spread)).toBeGreaterThan(0);
  });

  it("stops a /graphql flood from one address with the gateway's error shape", async () => {
    // The test gateway has no rate limit of its own: what refuses here is nginx's limit_req (a
    // burst of 100, refilled at 25 a second): 1 300 requests sent at once, which nginx counts as they arrive, however
    // slowly a loaded machine's gateways answer them (waves that waited for the answers could fall
    // below the refill there, and nothing would be refused).
    const responses: Response[] = [];
    const sent = Array.from({ length: 1_300 }, () =>
      fetch(`${proxyUrl}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"query":"{ __typename }"}' }),
    );
    for (const response of await Promise.all(sent)) {
      responses.push(response);
      if (response.status !== 429) await response.body?.cancel();
    }
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const limited = responses.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    expect(limited!.headers.get("retry-after")).toBe("1");
    expect(await limited!.json()).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED", retryAfterSeconds: 1 } }] });
    await Promise.all(responses.filter((r) => r !== limited && !r.bodyUsed).map((r) => r.body?.cancel()));
  });

  it("retries a POST that was in flight to a gateway that died on the other gateway: no honest request fails", async () => {
    const query = JSON.stringify({ query: "{ networkConfigs { chainId name confirmations } }" });
    const failures: string[] = [];
    // From an address of its own: the flood test's nginx budget (limit_req per address) is not this
    // one's. node:http binds localAddress (undici's Agent ignored connect.localAddress: every request
    // came from 127.0.0.1, whose budget the flood had spent, and failed when it had not refilled).
    const fromOwnAddress = new HttpAgent({ keepAlive: true });
    const sendOne = () =>
      new Promise<boolean>((resolve) => {
        const request = httpRequest(
          `${proxyUrl}/graphql`,
          {
            method: "POST",
            agent: fromOwnAddress,
            localAddress: "127.0.0.50",
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(query) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              let body: { data?: { networkConfigs: unknown[] }; errors?: unknown } = {};
              try {
                body = JSON.parse(text) as typeof body;
              } catch {}
              const ok = response.statusCode === 200 && body.errors === undefined && (body.data?.networkConfigs.length ?? 0) > 0;
              // What a failed one answered, for the assertion's message.
              if (!ok) failures.push(`${response.statusCode} ${text.slice(0, 200)} (from ${response.socket.localAddress})`);
              resolve(ok);
            });
            response.on("error", (error) => {
              failures.push(`response: ${error.message}`);
              resolve(false);
            });
          },
        );
        request.on("error", (error) => {
          failures.push(`request: ${error.message}`);
          resolve(false);
        });
        request.end(query);
      });
    // gateway-b dies on its 40th request, with that request (and any other it holds) unanswered:
    // its sockets are cut as a killed process's are, and it listens no more.
    let servedByB = 0;
    let crashedAt: number | undefined;
    const crashed = new Promise<void>((resolve) => {
      gatewayB.http.server.on("request", () => {
        servedByB++;
        if (servedByB !== 40) return;
        crashedAt = Date.now();
        gatewayB.http.server.close();
        gatewayB.http.server.closeAllConnections();
        resolve();
      });
    });
    const outcomes: boolean[] = [];
    let stop = false;
    // An honest client's pace: 4 requests at a time, each worker resting 200 ms between two, under
    // nginx's per-address rate (25 a second), so every answer is the gateways'.
    const worker = async () => {
      while (!stop) {
        outcomes.push(await sendOne());
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await crashed;
    const sentBeforeCrash = outcomes.length;
    // Keep the load on until as many again have been answered after the crash.
    await eventually(() => outcomes.length >= sentBeforeCrash + 100, 60_000, "requests after the crash");
    stop = true;
    await Promise.all(workers);
    fromOwnAddress.destroy();
    expect(crashedAt).toBeDefined();
    expect(
      outcomes.filter((ok) => !ok),
      [...new Set(failures)].join("\n"),
    ).toHaveLength(0);
    // The request gateway-b held when it died was sent on to gateway-a, and answered there.
    const [portA, portB] = [t.stack.http.port, gatewayB.http.port];
    await eventually(
      () => accessLog().some((line) => line.method === "POST" && line.upstream === `127.0.0.1:${portB}, 127.0.0.1:${portA}` && line.status === 200),
      5_000,
      "a POST retried from gateway-b on gateway-a in the access log",
    );
  }, 90_000);
});
