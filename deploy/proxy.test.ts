// The production reverse proxy, run for real: Debian's nginx with deploy/nginx.conf (only the
// upstream addresses, the listen address and nginx's own file paths rewritten for loopback) in
// front of a running gateway and a realtime node. GraphQL, /health and a Socket.IO WebSocket go
// through it; /metrics does not.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { insertUpdates, wallet } from "../test/outbox.ts";
import { attemptConnect, connectClient, type TestClient } from "../test/realtime.ts";
import { freePort } from "../test/private-postgres.ts";
import { binaryService, describeWith } from "../test/services.ts";
import { spawnChild, type Spawned } from "../test/spawn.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { testRealtimeSettings } from "../test/config.ts";
import { loadCompose } from "../test/compose.ts";
import { REALTIME_PATH } from "../realtime/events.ts";

const NGINX = "/usr/sbin/nginx";
/** The realtime node's allowance per client address in this suite (small: quick to reach). */
const SOCKETS_PER_ADDRESS = 3;
/** The Socket.IO path of the compose file's realtime nodes. */
const REALTIME_NODE_PATH = loadCompose().services["realtime-a"]!.environment!.REALTIME_PATH!;
// CI installs nginx (.ci/run); elsewhere the suite is skipped with SKIPPED and the install command in its title.
const nginxBinary = binaryService(NGINX, "apt-get install -y nginx-light");

/** deploy/nginx.conf with loopback upstreams and nginx's files in `dir`; everything else as shipped. */
function loopbackNginxConf(conf: string, options: { dir: string; port: number; gatewayPort: number; realtimePort: number }): string {
  const rewritten = conf
    .replace(/server gateway-[ab]:4000/g, `server 127.0.0.1:${options.gatewayPort}`)
    .replace(/server realtime-[ab]:4100/g, `server 127.0.0.1:${options.realtimePort}`)
    .replace("listen 8080;", `listen 127.0.0.1:${options.port};`)
    .replace("worker_processes auto;", "worker_processes 1;")
    .replace("worker_connections 16384;", "worker_connections 256;")
    .replace(
      "http {",
      ["http {", "access_log off;", ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `${name}_temp_path ${options.dir}/${name};`)].join(
        "\n  ",
      ),
    );
  return `pid ${options.dir}/nginx.pid;\nerror_log ${options.dir}/error.log warn;\n${rewritten}`;
}

describeWith(nginxBinary, "deploy/nginx.conf in front of the services", () => {
  let t: TestStack;
  let realtimeHttp: Server;
  let realtime: RunningRealtime;
  let nginx: Spawned;
  let proxyUrl: string;
  let dir: string;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    t = await startTestStack();
    realtimeHttp = createServer();
    await new Promise<void>((resolve) => realtimeHttp.listen(0, "127.0.0.1", resolve));
    realtime = await startRealtime(realtimeHttp, {
      db: t.db,
      logger: silentLogger(),
      // As the compose nodes behind the proxy: the client is the last X-Forwarded-For hop.
      settings: testRealtimeSettings({
        REALTIME_TRANSPORTS: "websocket",
        REALTIME_PATH: REALTIME_NODE_PATH,
        TRUST_PROXY_HOPS: "1",
        REALTIME_MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
      }),
    });

    dir = mkdtempSync(join(tmpdir(), "nginx-"));
    chmodSync(dir, 0o777); // nginx's workers drop root for nobody
    const port = await freePort();
    const conf = join(dir, "nginx.conf");
    writeFileSync(
      conf,
      loopbackNginxConf(readFileSync("deploy/nginx.conf", "utf8"), {
        dir,
        port,
        gatewayPort: t.stack.http.port,
        realtimePort: (realtimeHttp.address() as { port: number }).port,
      }),
    );
    nginx = spawnChild({ command: NGINX, args: ["-c", conf, "-p", dir, "-g", "daemon off;"], stdout: "ignore" });
    proxyUrl = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    while (
      (await fetch(`${proxyUrl}/health`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (Date.now() > deadline || !nginx.running()) throw new Error(`nginx did not come up: ${nginx.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await nginx?.stop({ signal: "SIGQUIT" }); // nginx's graceful stop
    await realtime?.stop();
    await new Promise((resolve) => realtimeHttp?.close(resolve));
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
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

  it("stops a /graphql flood from one address with the gateway's error shape", async () => {
    // The test gateway has no rate limit of its own: what refuses here is nginx's limit_req (a
    // burst of 1 000, refilled at 100 a second: the gateways' default points budget at the cheapest
    // request's price), fewer than 1 500 requests sent in quick waves.
    // 30 waves of 50 at once (the loopback nginx takes 256 connections).
    const responses: Response[] = [];
    for (let wave = 0; wave < 30; wave++) {
      const sent = Array.from({ length: 50 }, () =>
        fetch(`${proxyUrl}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"query":"{ __typename }"}' }),
      );
      for (const response of await Promise.all(sent)) {
        responses.push(response);
        if (response.status !== 429) await response.body?.cancel();
      }
    }
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const limited = responses.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    expect(limited!.headers.get("retry-after")).toBe("1");
    expect(await limited!.json()).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED", retryAfterSeconds: 1 } }] });
    await Promise.all(responses.filter((r) => r !== limited && !r.bodyUsed).map((r) => r.body?.cancel()));
  });
});
