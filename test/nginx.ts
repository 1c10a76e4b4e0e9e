// The production reverse proxy for tests: Debian's nginx running deploy/nginx.conf as shipped, with
// only the upstream addresses, the listen address and nginx's own file paths rewritten for loopback
// (deploy/proxy.test.ts, bin/traces.pg.test.ts).
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./private-postgres.ts";
import { binaryService } from "./services.ts";
import { spawnChild, type Spawned } from "./spawn.ts";

export const NGINX = "/usr/sbin/nginx";
// CI installs nginx (.ci/run); elsewhere the suites are skipped with SKIPPED and the install command in their title.
export const nginxBinary = binaryService(NGINX, "apt-get install -y nginx-light");

/** One line of the proxy's JSON access log. */
export interface AccessLogLine {
  /** When the request ended (nginx's $time_iso8601: whole seconds). */
  time: string;
  client: string;
  method: string;
  uri: string;
  status: number;
  upstream: string;
  upstreamStatus: string;
  /** Seconds in nginx, and the upstream's to connect, to its headers and to its last byte ("-" when none; comma-separated per upstream tried). */
  seconds: number;
  upstreamConnect: string;
  upstreamHeader: string;
  upstreamSeconds: string;
  requestId: string;
  traceparent: string;
}

export interface NginxUpstreams {
  gatewayPorts: [number, number];
  realtimePorts: [number, number];
}

/** Bounds other than the shipped ones. */
export interface NginxCapacity {
  /** Connections nginx's one worker may hold: the tests' 4 096 unless a load (bench/abuse.ts) needs the shipped 16 384. */
  workerConnections?: number;
  /** WebSocket connections per client address (`limit_conn`; shipped: 40), to meet nginx's own refusal with few sockets. */
  socketsPerAddress?: number;
}

/** deploy/nginx.conf with loopback upstreams (a and b each a backend of its own) and nginx's files in `dir`; everything else as shipped. */
export function loopbackNginxConf(conf: string, options: NginxUpstreams & NginxCapacity & { dir: string; port: number }): string {
  const connections = options.workerConnections ?? 4096;
  const rewritten = conf
    .replace("server gateway-a:4000", `server 127.0.0.1:${options.gatewayPorts[0]}`)
    .replace("server gateway-b:4000", `server 127.0.0.1:${options.gatewayPorts[1]}`)
    .replace("server realtime-a:4100", `server 127.0.0.1:${options.realtimePorts[0]}`)
    .replace("server realtime-b:4100", `server 127.0.0.1:${options.realtimePorts[1]}`)
    .replace("listen 8080;", `listen 127.0.0.1:${options.port};`)
    .replace("worker_processes auto;", "worker_processes 1;")
    .replace("worker_connections 16384;", `worker_connections ${connections};`)
    .replace("/var/log/nginx/access.log", `${options.dir}/access.log`)
    .replace(
      "http {",
      ["http {", ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `${name}_temp_path ${options.dir}/${name};`)].join("\n  "),
    );
  if (options.socketsPerAddress !== undefined && !/limit_conn sockets_per_address \d+;/.test(rewritten))
    throw new Error("deploy/nginx.conf has no limit_conn sockets_per_address to set");
  const bounded =
    options.socketsPerAddress === undefined
      ? rewritten
      : rewritten.replace(/limit_conn sockets_per_address \d+;/, `limit_conn sockets_per_address ${options.socketsPerAddress};`);
  if (/server (gateway|realtime)-/.test(bounded)) throw new Error("deploy/nginx.conf names an upstream server this test does not map");
  // Each connection a client holds is two of the worker's descriptors (the client's and the upstream's).
  return `pid ${options.dir}/nginx.pid;\nerror_log ${options.dir}/error.log warn;\nworker_rlimit_nofile ${2 * connections + 64};\n${bounded}`;
}

export interface RunningNginx {
  url: string;
  process: Spawned;
  /** The access log's lines so far (nginx writes each when its request ends). */
  accessLog(): AccessLogLine[];
  /** nginx's graceful stop, then its files removed. */
  stop(): Promise<void>;
}

/** Starts nginx with the shipped configuration in front of `upstreams`; resolves once its own /livez answers. */
export async function startNginx(upstreams: NginxUpstreams, capacity: NginxCapacity = {}): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), "nginx-"));
  chmodSync(dir, 0o777); // nginx's workers drop root for nobody
  const port = await freePort();
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, loopbackNginxConf(readFileSync("deploy/nginx.conf", "utf8"), { dir, port, ...upstreams, ...capacity }));
  const nginx = spawnChild({ command: NGINX, args: ["-c", conf, "-p", dir, "-g", "daemon off;"], stdout: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await nginx.stop({ signal: "SIGQUIT" });
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  while (
    (await fetch(`${url}/livez`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline || !nginx.running()) {
      await stop();
      throw new Error(`nginx did not come up: ${nginx.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    process: nginx,
    accessLog: () =>
      readFileSync(join(dir, "access.log"), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as AccessLogLine),
    stop,
  };
}
