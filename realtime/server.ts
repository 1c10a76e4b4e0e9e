// A realtime node: Socket.IO on someone else's HTTP server (build apart from listen). The dedicated
// host (realtime/main.ts) serves it on `/ws`; the gateway mounts it on its own server at `/socket.io`.
import type { Server as HttpServer } from "node:http";
import { Server } from "socket.io";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { handleConnection, DEFAULT_LIMITS, toPayload, type RealtimeLimits } from "./connection.ts";
import { REALTIME_PATH, type ClientToServerEvents, type InterServerEvents, type ServerToClientEvents } from "./events.ts";
import type { Fanout, RealtimeServer, SocketData } from "./fanout.ts";
import { DEFAULT_RETENTION, Outbox, type Retention } from "./outbox.ts";
import { UpdateStream } from "./stream.ts";
import { roomsForUpdate } from "./subscription.ts";

export interface RealtimeDeps {
  db: Database;
  logger: Logger;
  /** How updates reach this node, and its Socket.IO adapter (memory or Redis). */
  fanout: Fanout;
  /** `/ws` (dedicated host, the default) or `/socket.io` (mounted on the gateway). */
  path?: string;
  /** Shares the gateway's directory when mounted there; otherwise one of its own. */
  networks?: NetworkDirectory;
  limits?: Partial<RealtimeLimits>;
  retention?: Partial<Retention>;
  /** Default both; `["websocket"]` where the load balancer has no sticky sessions. */
  transports?: ("polling" | "websocket")[];
  /** Socket.IO heartbeat (defaults 25 000 / 20 000 ms): proxies must allow idle connections longer than their sum. */
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** Outbox rows per replay or heal read (default 500). */
  pageSize?: number;
}

export interface Realtime {
  io: RealtimeServer;
  path: string;
  /** The newest seq this node has delivered. */
  lastSeq(): bigint;
  /** Updates this node read from the outbox because the feed had not brought them. */
  healed(): number;
  /** Disconnects this node's clients and detaches from the HTTP server (which its owner closes). */
  close(): Promise<void>;
}

export async function createRealtime(httpServer: HttpServer, deps: RealtimeDeps): Promise<Realtime> {
  const limits: RealtimeLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const retention: Retention = { ...DEFAULT_RETENTION, ...deps.retention };
  const path = deps.path ?? REALTIME_PATH.dedicated;
  const pageSize = deps.pageSize ?? 500;
  const outbox = new Outbox(deps.db);
  const startSeq = await outbox.head();

  const adapter = deps.fanout.adapter();
  const io: RealtimeServer = new Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>(httpServer, {
    path,
    serveClient: false,
    maxHttpBufferSize: limits.maxMessageBytes,
    transports: deps.transports ?? ["polling", "websocket"],
    pingInterval: deps.pingIntervalMs ?? 25_000,
    pingTimeout: deps.pingTimeoutMs ?? 20_000,
    // A public, read-only API without cookies: any origin may connect (long-polling needs CORS).
    cors: { origin: "*", methods: ["GET", "POST"] },
    ...(adapter ? { adapter } : {}),
  });

  const stream = new UpdateStream({
    outbox,
    logger: deps.logger,
    startSeq,
    pageSize,
    deliver: (update) => {
      // Once per update per node; the adapter writes to each socket of the union of rooms once.
      io.local.to(roomsForUpdate(update)).emit("bets:update", toPayload(update));
    },
  });
  const stopFeed = deps.fanout.onFeed(io, (message) => stream.onMessage(message));

  const context = {
    stream,
    outbox,
    networks: deps.networks ?? new NetworkDirectory(deps.db),
    limits,
    retention,
    logger: deps.logger,
    replayPageSize: pageSize,
  };
  io.on("connection", (socket) => handleConnection(socket, context));
  deps.logger.info({ path, adapter: deps.fanout.kind, startSeq: startSeq.toString() }, "realtime node attached");

  let closed: Promise<void> | undefined;
  return {
    io,
    path,
    lastSeq: () => stream.lastSeq,
    healed: () => stream.healed,
    close() {
      closed ??= (async () => {
        stopFeed();
        stream.close();
        // `local`: with the Redis adapter a plain disconnectSockets would reach every node.
        io.local.disconnectSockets(true);
        await io.of("/").adapter.close();
        io.engine.close();
      })();
      return closed;
    },
  };
}
