// Realtime test and benchmark support: Socket.IO clients (one that records, one that resumes like a
// client application), a cluster of realtime processes on loopback, a TCP load balancer, and one
// Prometheus scrape. Outbox rows come from test/outbox.ts; processes are started by test/spawn.ts.
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { io as ioClient, type Socket as ClientSocket } from "socket.io-client";
import {
  REALTIME_PATH,
  type BetsErrorPayload,
  type BetUpdatePayload,
  type ClientToServerEvents,
  type Response,
  type ServerToClientEvents,
  type SubscribedPayload,
  type SubscribeRequest,
  type UnsubscribeRequest,
} from "../realtime/events.ts";
import { spawnTypeScript, type Spawned } from "./spawn.ts";

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

export type TypedClientSocket = ClientSocket<ServerToClientEvents, ClientToServerEvents>;

export interface TestClient {
  socket: TypedClientSocket;
  updates: BetUpdatePayload[];
  errors: BetsErrorPayload[];
  subscribed: SubscribedPayload[];
  subscribe(request: SubscribeRequest): Promise<Response<SubscribedPayload>>;
  unsubscribe(request: UnsubscribeRequest): Promise<Response<SubscribedPayload>>;
  /** Resolves once `predicate` holds (checked on every event), or rejects after `timeoutMs`. */
  until(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): void;
}

/**
 * A WebSocket client (no reconnection: tests reconnect explicitly, like a client behind a load
 * balancer), optionally from another loopback address (`localAddress`: another client address).
 */
export async function connectClient(url: string, path: string, options: { localAddress?: string } = {}): Promise<TestClient> {
  // `localAddress` reaches the `ws` client through engine.io-client's options (not in its types).
  const local = options.localAddress ? { localAddress: options.localAddress } : {};
  const socket: TypedClientSocket = ioClient(url, { path, transports: ["websocket"], reconnection: false, forceNew: true, ...local });
  const client: TestClient = {
    socket,
    updates: [],
    errors: [],
    subscribed: [],
    subscribe: (request) => socket.timeout(20_000).emitWithAck("bets:subscribe", request),
    unsubscribe: (request) => socket.timeout(20_000).emitWithAck("bets:unsubscribe", request),
    until(predicate, timeoutMs = 10_000, what = "condition") {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate()) return;
          clearTimeout(timer);
          clearInterval(poll);
          resolve();
        };
        const poll = setInterval(check, 10);
        const timer = setTimeout(() => {
          clearInterval(poll);
          reject(new Error(`timed out waiting for ${what} (${client.updates.length} updates, ${client.errors.length} errors)`));
        }, timeoutMs);
      });
    },
    close: () => void socket.close(),
  };
  socket.on("bets:update", (update) => client.updates.push(update));
  socket.on("bets:error", (error) => client.errors.push(error));
  socket.on("bets:subscribed", (state) => client.subscribed.push(state));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return client;
}

/** How a connection attempt ended: admitted, or refused with socket.io-client's `connect_error` (its `data` as the server sent it). */
export type ConnectAttempt = { socket: TypedClientSocket; admitted: true } | { socket: TypedClientSocket; admitted: false; message: string; data: unknown };

/**
 * One WebSocket connection attempt (no reconnection), from `localAddress` (any 127.0.0.x on
 * loopback: another client address) and with extra handshake headers (X-Forwarded-For).
 */
export function attemptConnect(url: string, path: string, options: { localAddress?: string; headers?: Record<string, string> } = {}): Promise<ConnectAttempt> {
  // `localAddress` reaches the `ws` client through engine.io-client's options (not in its types).
  const transportOptions = { ...(options.localAddress ? { localAddress: options.localAddress } : {}), extraHeaders: options.headers ?? {} };
  const socket: TypedClientSocket = ioClient(url, { path, transports: ["websocket"], reconnection: false, forceNew: true, ...transportOptions });
  return new Promise((resolve) => {
    socket.once("connect", () => resolve({ socket, admitted: true }));
    socket.once("connect_error", (error: Error & { data?: unknown }) => resolve({ socket, admitted: false, message: error.message, data: error.data }));
  });
}

/** What a client application does: keeps the last seq, and on every (re)connect subscribes to everything again from it. */
export interface ResumingClient {
  socket: TypedClientSocket;
  updates: BetUpdatePayload[];
  disconnectReasons: string[];
  connects: number;
  /** The seq the first subscription went live from. */
  since: bigint;
}

/** A stock socket.io-client (default reconnection; WebSocket, so no sticky sessions needed) as a `ResumingClient`. */
export async function resumingClient(url: string, options: { path?: string; reconnectionDelay?: number } = {}): Promise<ResumingClient> {
  const socket: TypedClientSocket = ioClient(url, {
    path: options.path ?? REALTIME_PATH.dedicated,
    transports: ["websocket"],
    forceNew: true,
    ...(options.reconnectionDelay === undefined ? {} : { reconnectionDelay: options.reconnectionDelay }),
  });
  const client: ResumingClient = { socket, updates: [], disconnectReasons: [], connects: 0, since: 0n };
  socket.on("bets:update", (update) => client.updates.push(update));
  socket.on("disconnect", (reason) => client.disconnectReasons.push(reason));
  await new Promise<void>((resolve, reject) => {
    socket.on("connect", () => {
      client.connects++;
      const last = client.updates.at(-1)?.seq;
      socket
        .timeout(20_000)
        .emitWithAck("bets:subscribe", last ? { all: true, sinceSeq: last } : { all: true })
        .then((state) => {
          if ("error" in state) return reject(new Error(state.error.message));
          if (client.connects === 1) client.since = BigInt(state.seq);
          resolve();
        }, reject);
    });
  });
  return client;
}

/** Seqs of the updates, as bigint, to compare with what was written. */
export function seqs(updates: BetUpdatePayload[]): bigint[] {
  return updates.map((u) => BigInt(u.seq));
}

// ---------------------------------------------------------------------------------------------
// A cluster of realtime processes on loopback: nodes (bin/realtime.ts) and publishers
// (bin/publisher.ts) sharing one PostgreSQL database and one Redis key prefix.
// ---------------------------------------------------------------------------------------------

/** A realtime process logging pino JSON lines on stdout. */
export interface Child extends Spawned {
  /** Resolves with the first log line whose `msg` equals `message`. */
  waitFor(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

function spawnLogging(script: string, env: Record<string, string>): Child {
  const spawned = spawnTypeScript(script, { env: { LOG_LEVEL: "info", NODE_ENV: "test", ...env } });
  return Object.assign(spawned, {
    waitFor: (message: string, timeoutMs = 20_000) => spawned.waitForJson((line) => line.msg === message, timeoutMs, `"${message}"`),
  });
}

export interface ClusterNode extends Child {
  url: string;
}

export interface Cluster {
  nodes: ClusterNode[];
  publishers: Child[];
  /** The publisher that logged "publisher active" last, among those still running. */
  activePublisher(): Child | undefined;
  startNode(): Promise<ClusterNode>;
  startPublisher(): Child;
  /** Stops every child still running (SIGTERM, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}

export async function startCluster(options: {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  nodes: number;
  publishers: number;
  env?: Record<string, string>;
  /** How long each child may take to say it is ready (default 30 s; a benchmark on a loaded machine gives more). */
  readyTimeoutMs?: number;
}): Promise<Cluster> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const env = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    REALTIME_REDIS_PREFIX: options.prefix,
    HOST: "127.0.0.1",
    PORT: "0",
    REALTIME_POLL_INTERVAL_MS: "500",
    ...options.env,
  };
  const children: Child[] = [];
  const cluster: Cluster = {
    nodes: [],
    publishers: [],
    activePublisher() {
      let best: { child: Child; at: number } | undefined;
      for (const child of cluster.publishers) {
        if (!child.running()) continue;
        const line = [...child.json].reverse().find((l) => l.msg === "publisher active");
        if (line && (!best || Number(line.time) > best.at)) best = { child, at: Number(line.time) };
      }
      return best?.child;
    },
    async startNode() {
      const child = spawnLogging("bin/realtime.ts", env);
      children.push(child);
      const ready = await child.waitFor("realtime node ready", readyTimeoutMs);
      const node = Object.assign(child, { url: String(ready.url) });
      cluster.nodes.push(node);
      return node;
    },
    startPublisher() {
      const child = spawnLogging("bin/publisher.ts", env);
      children.push(child);
      cluster.publishers.push(child);
      return child;
    },
    async stop() {
      await Promise.all(children.map((child) => child.stop({ graceMs: 3_000 })));
    },
  };
  for (let i = 0; i < options.publishers; i++) cluster.startPublisher();
  try {
    await Promise.all(Array.from({ length: options.nodes }, () => cluster.startNode()));
    await Promise.any(cluster.publishers.map((p) => p.waitFor("publisher active", readyTimeoutMs)));
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

// ---------------------------------------------------------------------------------------------
// Fault tests: a load balancer, a metrics scrape.
// ---------------------------------------------------------------------------------------------

export interface Balancer {
  url: string;
  /** Connections each backend has been given. */
  routed: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A TCP load balancer on loopback, as clients meet one in production: each new connection goes to
 * the first backend (`host:port` URLs) that accepts it, so a node that stopped listening (draining,
 * dead) gets no new clients. A WebSocket stays on its backend for its whole life.
 */
export async function startBalancer(backends: string[]): Promise<Balancer> {
  const routed = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    client.pause();
    const attempt = (index: number) => {
      const backend = backends[index];
      if (!backend) return void client.destroy();
      const { hostname, port } = new URL(backend);
      const upstream = connect({ host: hostname, port: Number(port) });
      let established = false;
      sockets.add(upstream);
      upstream.once("connect", () => {
        established = true;
        routed.set(backend, (routed.get(backend) ?? 0) + 1);
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.on("error", () => {
        upstream.destroy();
        if (!established) attempt(index + 1); // refused: the next backend
      });
      upstream.once("close", () => {
        sockets.delete(upstream);
        if (established) client.destroy();
      });
      client.once("close", () => upstream.destroy());
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routed,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One Prometheus scrape: metric name → value (labels ignored: the realtime series carry only `service`). */
export async function scrape(url: string): Promise<Record<string, number>> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const values: Record<string, number> = {};
  for (const line of (await response.text()).split("\n")) {
    const match = /^([a-z_]+)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (match) values[match[1]!] = Number(match[2]);
  }
  return values;
}
