// Admission: who may open a socket on this node, decided at the handshake, before the socket costs
// anything (no subscription, no room, no replay). Four bounds, checked cheapest first:
//
//   1. memory: the process's RSS is past its budget (`maxMemoryBytes`) → NODE_FULL;
//   2. the node's sockets (`maxSockets`) → NODE_FULL;
//   3. this client address's sockets on this node (`maxSocketsPerAddress`) → TOO_MANY_CONNECTIONS;
//   4. this client address's sockets across the cluster (`maxSocketsPerAddressCluster`), counted in
//      Redis by the nodes together (admission-redis.ts) → TOO_MANY_CONNECTIONS.
//
// The client address is the one the gateway limits (core/client-address.ts): the peer, or behind
// `trustProxyHops` proxies the address they appended to X-Forwarded-For. The cluster count fails
// safe: while Redis does not answer, 1–3 still hold (never unlimited, never everyone refused).
//
// A refusal is a Socket.IO middleware error, which socket.io-client reports as `connect_error`
// with `data: { code, message, retryAfterSeconds }`; the node then closes the connection. A bare
// engine.io client never reaches the middleware, so the handshake itself (allowRequest) refuses an
// address holding twice its allowance of raw connections, or a node holding twice its sockets. A
// Socket.IO client flooding faster than its refused connections close reaches them too, so these
// refusals say as much: HTTP 429 with `Retry-After` and the same JSON `{ code, message,
// retryAfterSeconds }` (answerRefusal), counted as `address_connections` / `node_connections`.
import { type IncomingMessage, ServerResponse } from "node:http";
import { clientAddress } from "../core/client-address.ts";
import type { Logger } from "../core/logger.ts";
import { ConnectErrorCode, type ConnectErrorData } from "./events.ts";
import type { RealtimeServer, RealtimeSocket } from "./fanout.ts";

export interface AdmissionLimits {
  /** Sockets one client address may hold on this node (0: no bound). */
  maxSocketsPerAddress: number;
  /** Sockets one client address may hold across the cluster, with a shared counter (0: no bound). */
  maxSocketsPerAddressCluster: number;
  /** Sockets this node holds at most (0: no bound). */
  maxSockets: number;
  /** RSS in bytes past which new sockets are refused (0: no bound). */
  maxMemoryBytes: number;
}

/**
 * The library's defaults. The memory budget is off here: the RSS is the whole process's, which only
 * its composition root can budget (REALTIME_MAX_MEMORY_MB, 768 MiB by default, in bin/wiring.ts).
 */
export const DEFAULT_ADMISSION: AdmissionLimits = {
  maxSocketsPerAddress: 20,
  maxSocketsPerAddressCluster: 40,
  maxSockets: 10_000,
  maxMemoryBytes: 0,
};

/**
 * Sockets per client address across the cluster. Each node mirrors its own count per address into
 * it (absolute values, so a lost write is repaired by the next), and a node that stops renewing
 * its presence drops out of every sum.
 */
export interface ClusterSocketCounter {
  /**
   * Admits when the other nodes' sockets for `address` plus `local` (this node's count, the new
   * socket included) are at most `max`, then records `local`; else records nothing. Rejects when
   * the counter cannot answer (the caller admits on the node's own bounds).
   */
  admit(address: string, local: number, max: number): Promise<boolean>;
  /** Records this node's count for `address` (0 removes it); best effort. */
  record(address: string, local: number): void;
  close(): Promise<void>;
}

/** Why a handshake was refused: the label of `realtime_admission_refusals_total`. */
export type RefusalReason = "memory" | "node" | "address" | "address_cluster" | "address_connections" | "node_connections";

/** Retry hints: a socket of the same address frees up when its client leaves; a full node when any client does. */
const RETRY_AFTER_SECONDS: Record<RefusalReason, number> = {
  memory: 30,
  node: 10,
  address: 30,
  address_cluster: 30,
  address_connections: 30,
  node_connections: 10,
};

export interface AdmissionOptions {
  limits: AdmissionLimits;
  trustProxyHops: number;
  logger: Logger;
  /** The cluster's counter, given this node's count per address (which it mirrors); none: per node only. */
  cluster?: (counts: () => ReadonlyMap<string, number>) => ClusterSocketCounter;
  /** The process's resident memory in bytes (default `process.memoryUsage.rss()`). */
  memoryBytes?: () => number;
}

export interface AdmissionStats {
  /** Refused handshakes since start, by reason. */
  refusals: Record<RefusalReason, number>;
  /** Handshakes admitted without the cluster counter (it did not answer), since start. */
  clusterUnavailable: number;
}

export interface Admission {
  /**
   * The engine's backstop: refuses an address holding twice its allowance of raw connections, or a
   * node twice its sockets (counted); the refusal to answer with answerRefusal, undefined when allowed.
   */
  allowRequest(req: IncomingMessage): ConnectErrorData | undefined;
  stats(): AdmissionStats;
  /** Sockets admitted and still open for `address` on this node; raw connections for it. */
  holding(address: string): { sockets: number; connections: number };
  close(): Promise<void>;
}

class AdmissionRefusal extends Error {
  readonly data: ConnectErrorData;
  constructor(code: ConnectErrorData["code"], message: string, retryAfterSeconds: number) {
    super(message);
    this.data = { code, message, retryAfterSeconds };
  }
}

/** Adds one to `key` in `counts` (or `delta`), removing it at zero; returns the new value. */
function bump(counts: Map<string, number>, key: string, delta: number): number {
  const value = (counts.get(key) ?? 0) + delta;
  if (value > 0) counts.set(key, value);
  else counts.delete(key);
  return value;
}

/** Installs admission on `io` (its middleware and the engine's connection count); `allowRequest` is the server's to call. */
export function installAdmission(io: RealtimeServer, options: AdmissionOptions): Admission {
  const { limits, logger } = options;
  const memoryBytes = options.memoryBytes ?? (() => process.memoryUsage.rss());
  const sockets = new Map<string, number>();
  const connections = new Map<string, number>();
  let admitted = 0;
  const refusals: Record<RefusalReason, number> = { memory: 0, node: 0, address: 0, address_cluster: 0, address_connections: 0, node_connections: 0 };
  let clusterUnavailable = 0;
  const cluster = options.cluster?.(() => sockets);
  let lastWarning = -Infinity;
  const addressOf = (req: Pick<IncomingMessage, "socket" | "headers">) => clientAddress(req, options.trustProxyHops);

  io.engine.on("connection", (conn: { request: IncomingMessage; once(event: "close", listener: () => void): void }) => {
    const address = addressOf(conn.request);
    bump(connections, address, 1);
    conn.once("close", () => bump(connections, address, -1));
  });

  const refuse = (reason: RefusalReason, address: string, message: string): AdmissionRefusal => {
    refusals[reason]++;
    // One line per 10 s at most: a flood is what this refuses, its log must not be one.
    if (performance.now() - lastWarning > 10_000) {
      lastWarning = performance.now();
      logger.warn({ reason, address, refusals }, "realtime handshake refused");
    }
    const code = reason === "memory" || reason === "node" || reason === "node_connections" ? ConnectErrorCode.NodeFull : ConnectErrorCode.TooManyConnections;
    return new AdmissionRefusal(code, message, RETRY_AFTER_SECONDS[reason]);
  };

  /** Null when admitted (the socket is then counted), else why not. */
  const decide = async (address: string): Promise<AdmissionRefusal | null> => {
    if (limits.maxMemoryBytes > 0 && memoryBytes() > limits.maxMemoryBytes) {
      return refuse("memory", address, "This node is at its memory budget: retry later (another node may have room)");
    }
    if (limits.maxSockets > 0 && admitted >= limits.maxSockets) {
      return refuse("node", address, `This node holds its most sockets (${limits.maxSockets}): retry later (another node may have room)`);
    }
    const local = sockets.get(address) ?? 0;
    if (limits.maxSocketsPerAddress > 0 && local >= limits.maxSocketsPerAddress) {
      return refuse("address", address, `At most ${limits.maxSocketsPerAddress} sockets per client address on a node: close one first`);
    }
    // Counted before the cluster's answer, so concurrent handshakes of one address see each other.
    admitted++;
    const count = bump(sockets, address, 1);
    if (cluster && limits.maxSocketsPerAddressCluster > 0) {
      let ok = true;
      try {
        ok = await cluster.admit(address, count, limits.maxSocketsPerAddressCluster);
      } catch {
        clusterUnavailable++; // fail safe: the node's own bounds above still held
      }
      if (!ok) {
        admitted--;
        cluster.record(address, bump(sockets, address, -1));
        return refuse("address_cluster", address, `At most ${limits.maxSocketsPerAddressCluster} sockets per client address: close one first`);
      }
    }
    return null;
  };

  io.use((socket: RealtimeSocket, next) => {
    const address = addressOf(socket.request);
    decide(address).then(
      (refusal) => {
        if (refusal) {
          next(refusal);
          // The connect error is queued first: engine.io writes it out, then closes.
          setImmediate(() => socket.conn.close());
          return;
        }
        // Released once: on disconnect, or when the connection closed before the socket could join.
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          admitted--;
          const local = bump(sockets, address, -1); // not inside `cluster?.record(…)`: skipped without a cluster
          cluster?.record(address, local);
        };
        socket.once("disconnect", release);
        socket.conn.once("close", release);
        // The connection may have closed while the cluster counter was asked: its "close" has
        // fired already and the socket will never connect (Socket.IO drops it), so free its slot now.
        if (socket.conn.readyState !== "open") release();
        next();
      },
      (error: unknown) => next(error instanceof Error ? error : new Error(String(error))),
    );
  });

  return {
    allowRequest(req) {
      const address = addressOf(req);
      if (limits.maxSockets > 0 && io.engine.clientsCount >= 2 * limits.maxSockets) {
        return refuse("node_connections", address, `This node holds its most connections (${2 * limits.maxSockets}): retry later (another node may have room)`)
          .data;
      }
      const allowance = limits.maxSocketsPerAddress;
      if (allowance > 0 && (connections.get(address) ?? 0) >= 2 * allowance) {
        return refuse("address_connections", address, `At most ${2 * allowance} connections per client address on a node: close some first`).data;
      }
      return undefined;
    },
    stats: () => ({ refusals: { ...refusals }, clusterUnavailable }),
    holding: (address) => ({ sockets: sockets.get(address) ?? 0, connections: connections.get(address) ?? 0 }),
    close: async () => cluster?.close(),
  };
}

/** The status lines a handshake refusal answers with: a client over its allowance, or a node that cannot take it. */
const REFUSAL_STATUS = { 429: "Too Many Requests", 503: "Service Unavailable" } as const;

/**
 * Answers a handshake the backstop refused, before engine.io closes it: HTTP `status` (429: over an
 * allowance; 503: a draining node), `Retry-After` and the refusal as JSON, over long-polling (the
 * request's response) or WebSocket (the upgrade's socket, written out before `done`, so the client
 * reads it rather than a bare close).
 */
export function answerRefusal(req: IncomingMessage, refusal: ConnectErrorData, done: () => void, status: keyof typeof REFUSAL_STATUS = 429): void {
  const body = JSON.stringify(refusal);
  const res = (req as IncomingMessage & { res?: unknown }).res;
  if (res instanceof ServerResponse) {
    if (!res.headersSent) {
      res.writeHead(status, { "content-type": "application/json", "retry-after": String(refusal.retryAfterSeconds), "cache-control": "no-store" });
      res.end(body);
    }
    done();
    return;
  }
  const socket = req.socket;
  if (!socket.writable) {
    done();
    return;
  }
  const head = [
    `HTTP/1.1 ${status} ${REFUSAL_STATUS[status]}`,
    "Connection: close",
    "Content-Type: application/json",
    `Retry-After: ${refusal.retryAfterSeconds}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => done());
}
