// Test and benchmark helpers: outbox rows written the way the indexer writes them (one INSERT per
// call, in one transaction, serialised like the indexer so seq commits in order), and a child
// process runner for realtime nodes and publishers.
import { spawn, type ChildProcess } from "node:child_process";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { createInterface } from "node:readline";
import type { BetJson } from "../core/bet-json.ts";
import type { Database } from "../core/db.ts";
import { io as ioClient, type Socket as ClientSocket } from "socket.io-client";
import { REALTIME_PATH } from "./events.ts";
import type { Prisma } from "../prisma/generated/client.ts";
import type {
  BetsErrorPayload,
  BetUpdatePayload,
  BetUpdateType,
  ClientToServerEvents,
  Response,
  ServerToClientEvents,
  SubscribedPayload,
  SubscribeRequest,
  UnsubscribeRequest,
} from "./events.ts";

export interface TestUpdate {
  chainId: number;
  betId: string;
  player: string;
  type?: BetUpdateType;
  /** Characters of filler added to the stored bet JSON (large payloads: slow-consumer tests). */
  fillerChars?: number;
}

const hex = (n: bigint, bytes: number) => `0x${BigInt.asUintN(bytes * 8, n).toString(16).padStart(bytes * 2, "0")}`;

/** A BetJson that keeps the contract's conventions (decimal strings, lowercase hex). */
export function fakeBet(update: TestUpdate): BetJson {
  const type = update.type ?? "PLACED";
  const id = BigInt(update.betId);
  const status = type === "SETTLED" ? "SETTLED" : type === "REFUNDED" ? "REFUNDED" : "PENDING";
  const settled = status === "SETTLED";
  return {
    chainId: update.chainId,
    betId: update.betId,
    player: update.player,
    token: hex(0n, 20),
    stake: "1500000000000000000",
    game: "coinflip",
    clientSeed: hex(id + 1n, 32),
    serverSeedHash: hex(id + 2n, 32),
    status,
    placedBlock: "100",
    placedTx: hex(id + 3n, 32),
    placedAt: "1700000200",
    settledBlock: settled ? "101" : null,
    settledTx: settled ? hex(id + 4n, 32) : null,
    settledAt: settled ? "1700000202" : null,
    refundedBlock: status === "REFUNDED" ? "101" : null,
    refundedTx: status === "REFUNDED" ? hex(id + 5n, 32) : null,
    refundedAt: status === "REFUNDED" ? "1700000202" : null,
    confirmations: "1",
    finalized: false,
    result: settled
      ? {
          outcome: "12345678901234567890123456789",
          won: true,
          payout: "3000000000000000000",
          proof: { protocol: "groth16", curve: "bn128", piA: ["1", "2", "1"], piB: [["1", "2"], ["3", "4"], ["1", "0"]], piC: ["5", "6", "1"],
            publicSignals: ["7", "8", "9", "10"], solidityCalldata: "0x", verified: true },
        }
      : null,
  };
}

/** Same key as the indexer's writer lock would be if it had none of its own: serialises test writers. */
const WRITER_LOCK = 0x6f757462; // "outb"

/** Writes the updates as outbox rows in one transaction (one INSERT); resolves to their seqs once committed. */
export async function insertUpdates(db: Database, updates: TestUpdate[]): Promise<bigint[]> {
  if (updates.length === 0) return [];
  const data = updates.map((u): Prisma.BetUpdateCreateManyInput => ({
    chainId: BigInt(u.chainId),
    betId: u.betId,
    type: u.type ?? "PLACED",
    player: u.player,
    blockNumber: 100n,
    blockHash: hex(1n, 32),
    bet: { ...fakeBet(u), ...(u.fillerChars ? { filler: "x".repeat(u.fillerChars) } : {}) } as unknown as Prisma.InputJsonValue,
  }));
  if (db.kind === "pglite") {
    const rows = await db.prisma.betUpdate.createManyAndReturn({ data, select: { seq: true } });
    return rows.map((r) => r.seq);
  }
  const rows = await db.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${WRITER_LOCK})`;
    return tx.betUpdate.createManyAndReturn({ data, select: { seq: true } });
  });
  return rows.map((r) => r.seq);
}

export function wallet(n: number): string {
  return hex(BigInt(n) + 0xabc0000n, 20);
}

// ---------------------------------------------------------------------------------------------
// Child processes (tsx), each logging pino JSON lines on stdout.
// ---------------------------------------------------------------------------------------------

export interface Child {
  process: ChildProcess;
  pid: number;
  /** Resolves with the first log line whose `msg` equals `message`. */
  waitFor(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Log lines seen so far. */
  lines: Record<string, unknown>[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `node --import tsx script`: one process (the tsx CLI would add a wrapper whose pid is not the server's). */
export function spawnTsx(script: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...process.env, LOG_LEVEL: "info", NODE_ENV: "test", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${script}`);
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<{ message: string; resolve: (line: Record<string, unknown>) => void }>();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  createInterface({ input: child.stdout! }).on("line", (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters) {
      if (line.msg === waiter.message) {
        waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  });
  return {
    process: child,
    pid: child.pid,
    lines,
    waitFor(message, timeoutMs = 20_000) {
      const seen = lines.find((l) => l.msg === message);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = { message, resolve: (line: Record<string, unknown>) => (clearTimeout(timer), resolve(line)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`${script} (pid ${child.pid}) did not log "${message}" within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        waiters.add(waiter);
        exited.then(() => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new Error(`${script} (pid ${child.pid}) exited before logging "${message}"; stderr: ${stderr}`));
        });
      });
    },
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid!, signal);
      await exited;
    },
  };
}

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

/** A WebSocket client (no reconnection: tests reconnect explicitly, like a client behind a load balancer). */
export async function connectClient(url: string, path: string): Promise<TestClient> {
  const socket: TypedClientSocket = ioClient(url, { path, transports: ["websocket"], reconnection: false, forceNew: true });
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
      socket.timeout(20_000).emitWithAck("bets:subscribe", last ? { all: true, sinceSeq: last } : { all: true }).then((state) => {
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

/** Minimal Network rows for chain ids (subscriptions refuse unknown chains). */
export async function createNetworks(db: Database, chainIds: number[]): Promise<void> {
  for (const chainId of chainIds) {
    await db.prisma.network.create({
      data: { chainId: BigInt(chainId), name: `test${chainId}`, confirmations: 2, verificationKeyJson: "{}", verificationKeySha256: hex(0n, 32) },
    });
  }
}

// ---------------------------------------------------------------------------------------------
// A cluster of realtime processes on loopback: nodes (realtime/main.ts) and publishers
// (realtime/publisher-main.ts) sharing one PostgreSQL database and one Redis key prefix.
// ---------------------------------------------------------------------------------------------

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
  /** Kills every child still running (SIGTERM, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}

export async function startCluster(options: { databaseUrl: string; redisUrl: string; prefix: string; nodes: number; publishers: number; env?: Record<string, string> }): Promise<Cluster> {
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
        if (child.process.exitCode !== null || child.process.signalCode !== null) continue;
        const line = [...child.lines].reverse().find((l) => l.msg === "publisher active");
        if (line && (!best || Number(line.time) > best.at)) best = { child, at: Number(line.time) };
      }
      return best?.child;
    },
    async startNode() {
      const child = spawnTsx("realtime/main.ts", env);
      children.push(child);
      const ready = await child.waitFor("realtime node ready", 30_000);
      const node = { ...child, url: String(ready.url) };
      cluster.nodes.push(node);
      return node;
    },
    startPublisher() {
      const child = spawnTsx("realtime/publisher-main.ts", env);
      children.push(child);
      cluster.publishers.push(child);
      return child;
    },
    async stop() {
      await Promise.all(
        children.map(async (child) => {
          const timer = setTimeout(() => void child.kill("SIGKILL"), 3_000);
          await child.kill("SIGTERM");
          clearTimeout(timer);
        }),
      );
    },
  };
  for (let i = 0; i < options.publishers; i++) cluster.startPublisher();
  try {
    await Promise.all(Array.from({ length: options.nodes }, () => cluster.startNode()));
    await Promise.any(cluster.publishers.map((p) => p.waitFor("publisher active", 30_000)));
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

// ---------------------------------------------------------------------------------------------
// Fault tests: a writer that keeps the outbox moving, polling for a condition, a load balancer.
// ---------------------------------------------------------------------------------------------

export interface WrittenUpdate {
  seq: bigint;
  player: string;
}

export interface Writer {
  /** Every update committed so far, in seq order. */
  written: WrittenUpdate[];
  /** Stops writing and resolves once the last write has committed. */
  stop(): Promise<void>;
}

/** Writes one update every `intervalMs`, players in turn, until stopped (write failures are retried). */
export function keepWriting(db: Database, options: { players: string[]; intervalMs?: number; chainId?: number; firstBetId?: number }): Writer {
  const written: WrittenUpdate[] = [];
  let writing = true;
  let betId = options.firstBetId ?? 1_000_000;
  const loop = (async () => {
    for (let i = 0; writing; i++) {
      const player = options.players[i % options.players.length]!;
      const [seq] = await insertUpdates(db, [{ chainId: options.chainId ?? 1, betId: String(betId++), player }]);
      written.push({ seq: seq!, player });
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
    }
  })();
  return {
    written,
    async stop() {
      writing = false;
      await loop;
    },
  };
}

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
