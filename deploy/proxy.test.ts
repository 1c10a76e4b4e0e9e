// The production reverse proxy, run for real: Debian's nginx with deploy/nginx.conf (only the
// upstream addresses, the listen address and nginx's own file paths rewritten for loopback) in
// front of a running gateway and a realtime node. GraphQL, /health and a Socket.IO WebSocket go
// through it; /metrics does not.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { connectClient, insertUpdates, wallet, type TestClient } from "../realtime/testing.ts";
import { freePort } from "../test/private-postgres.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

const NGINX = "/usr/sbin/nginx";
// CI installs nginx (.ci/run); elsewhere the test says why it did not run.
const available = existsSync(NGINX) || process.env.CI === "true";

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
      ["http {", "access_log off;", ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `${name}_temp_path ${options.dir}/${name};`)].join("\n  "),
    );
  return `pid ${options.dir}/nginx.pid;\nerror_log ${options.dir}/error.log warn;\n${rewritten}`;
}

describe.skipIf(!available)("deploy/nginx.conf in front of the services", () => {
  let t: TestStack;
  let realtimeHttp: Server;
  let realtime: RunningRealtime;
  let nginx: ChildProcess;
  let proxyUrl: string;
  let dir: string;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    t = await startTestStack();
    realtimeHttp = createServer();
    await new Promise<void>((resolve) => realtimeHttp.listen(0, "127.0.0.1", resolve));
    realtime = await startRealtime(realtimeHttp, { db: t.db, logger: silentLogger(), env: { REALTIME_TRANSPORTS: "websocket" } });

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
    nginx = spawn(NGINX, ["-c", conf, "-p", dir, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    nginx.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proxyUrl = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    while ((await fetch(`${proxyUrl}/health`).then((r) => r.status, () => 0)) !== 200) {
      if (Date.now() > deadline || nginx.exitCode !== null) throw new Error(`nginx did not come up: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    if (nginx?.pid !== undefined && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once("exit", resolve));
      process.kill(nginx.pid, "SIGQUIT"); // nginx's graceful stop
      await exited;
    }
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

  it("upgrades Socket.IO WebSockets on /ws and delivers updates through the proxy", async () => {
    const client = await connectClient(proxyUrl, "/ws");
    clients.push(client);
    expect(client.socket.io.engine.transport.name).toBe("websocket");
    const state = await client.subscribe({ all: true });
    expect(state).toMatchObject({ all: true });
    const chainId = t.fixtures.networks[0]!.chainId;
    const [seq] = await insertUpdates(t.db, [{ chainId, betId: "900001", player: wallet(1) }]);
    await client.until(() => client.updates.some((u) => u.seq === String(seq)), 15_000, "the update through the proxy");
    expect(client.updates.find((u) => u.seq === String(seq))).toMatchObject({ type: "PLACED", chainId, betId: "900001" });
  });
});
