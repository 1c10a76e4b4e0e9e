// A realtime node: Socket.IO on someone else's HTTP server (build apart from listen). The dedicated
// host (bin/realtime.ts) serves it on `/ws`; the gateway mounts it on its own server at `/socket.io`.
import type { Server as HttpServer } from "node:http";
import { Server } from "socket.io";
import { BoundedLane, type LaneOptions, type LaneStats } from "../core/bounded-lane.ts";
import type { Database } from "../core/db.ts";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { continueTraced } from "../core/tracing.ts";
import { answerRefusal, installAdmission, DEFAULT_ADMISSION, type AdmissionLimits, type AdmissionOptions, type AdmissionStats } from "./admission.ts";
import { closeTransport, coalesceWrites, watchSlowConsumers } from "./backpressure.ts";
import {
  handleConnection,
  replayLaneRefusal,
  DEFAULT_LIMITS,
  REPLAY_PAGE_UPDATES,
  type ConnectionContext,
  type ConnectionHandle,
  type RealtimeLimits,
  type ReplayBudget,
} from "./connection.ts";
import { DeliveryDepth } from "./depth.ts";
import { DEFAULT_FIREHOSE_LIMITS, FirehoseSlots, type FirehoseLimits, type FirehoseStats } from "./firehose.ts";
import {
  ConnectErrorCode,
  type ConnectErrorData,
  REALTIME_PATH,
  type ClientToServerEvents,
  type InterServerEvents,
  type ServerToClientEvents,
} from "./events.ts";
import type { Fanout, RealtimeServer, SocketData } from "./fanout.ts";
import { DEFAULT_RETENTION, Outbox, type Retention } from "../core/outbox.ts";
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
  /** Outbox rows per heal read (a node catching up on the feed; default 500). */
  pageSize?: number;
  /** Outbox rows per replay page, the unit a replay pays for (default REPLAY_PAGE_UPDATES, 100). */
  replayPageSize?: number;
  /** Charged per replay page, keyed by client address; none: replays are free. */
  replayBudget?: ReplayBudget;
  /** Pages a replay pays for before its first read, at most (its seq range's pages; default 10; connection.ts). */
  replayPrepaidPages?: number;
  /** How long a replay waits for a socket that does not read before it closes its connection (default 10 000 ms). */
  replayDrainTimeoutMs?: number;
  /**
   * The node's replay lane (core/bounded-lane.ts): replay page reads running at once, per client
   * address, and how long one waits before SERVICE_UNAVAILABLE; none: they run unbounded.
   */
  replayLane?: LaneOptions;
  /**
   * Local delivery: while the fan-out is disconnected (Redis away), or no feed message (the
   * publisher's heartbeat comes every second) arrived for `feedTimeoutMs` (0, the default: only the
   * former), the node reads the outbox itself every `localPollMs` (default 1000) and delivers to its
   * own sockets.
   */
  localPollMs?: number;
  feedTimeoutMs?: number;
  /** Admission at the handshake (admission.ts): sockets per address, per node, memory. Default DEFAULT_ADMISSION. */
  admission?: Partial<AdmissionLimits>;
  /** Firehose subscriptions per node and per client address (firehose.ts). Default DEFAULT_FIREHOSE_LIMITS. */
  firehose?: Partial<FirehoseLimits>;
  /** Proxies whose X-Forwarded-For entries name the client (core/client-address.ts); default 0: the peer. */
  trustProxyHops?: number;
  /** The cluster's sockets per address (admission-redis.ts); none: admission counts this node only. */
  clusterCounter?: AdmissionOptions["cluster"];
  /** The process's RSS in bytes, for the memory budget (default `process.memoryUsage.rss()`). */
  memoryBytes?: () => number;
  /** How often sockets' queued bytes are checked against `limits.maxBufferedBytes` (default 500 ms). */
  slowConsumerCheckMs?: number;
}

/** How updates reach this node's sockets now: through the publisher's feed, or read locally from the outbox. */
export type DeliveryMode = "feed" | "local";

export interface RealtimeState {
  delivery: DeliveryMode;
  /** Whether the fan-out's connections are up (always true in memory). */
  fanoutConnected: boolean;
  /** Milliseconds since the last feed message (null: none yet). */
  feedAgeMs: number | null;
  draining: boolean;
  sockets: number;
}

export interface Realtime {
  io: RealtimeServer;
  path: string;
  /** The newest seq this node has delivered. */
  lastSeq(): bigint;
  /** Updates this node read from the outbox because the feed had not brought them. */
  healed(): number;
  /** Updates this node delivered to its rooms (each once, however many sockets it reached). */
  delivered(): number;
  /** Subscription items over this node's sockets (see ConnectionHandle.subscriptions). */
  subscriptions(): number;
  /** Connections closed because their socket had more than `limits.maxBufferedBytes` queued. */
  slowConsumerDisconnects(): number;
  /** Connections closed because they stopped reading their replay (past `replayDrainTimeoutMs`). */
  replayStalls(): number;
  /** Replay requests refused (or cut short) because the client's replay budget was spent. */
  replayRefusals(): number;
  /** The replay lane's page reads running and waiting, and its refusals; undefined without a lane. */
  replayLane(): LaneStats | undefined;
  /** Handshakes refused by admission, by reason. */
  admission(): AdmissionStats;
  /** Firehose subscriptions held, and refused by reason. */
  firehose(): FirehoseStats;
  state(): RealtimeState;
  /**
   * SIGTERM: refuses new connections, sends `server:draining` to every socket, lets requests in
   * flight finish, then closes each connection at the transport level so that clients reconnect
   * (elsewhere) by themselves. Resolves when every socket is gone, or after `graceMs` at most.
   */
  drain(graceMs: number): Promise<void>;
  /** Closes this node's connections (clients reconnect elsewhere) and detaches from the HTTP server (which its owner closes). */
  close(): Promise<void>;
}

/** How long delivery waits for the networks' heads before it counts depths from the last ones read. */
const HEADS_WAIT_MS = 250;

const DRAINING_MESSAGE = "This node is shutting down: reconnect and resume with the last seq as sinceSeq";
/**
 * A handshake that reaches a draining node (the balancer has not taken it out yet): 503 with the
 * other refusals' JSON, NODE_FULL (another node has room), retry at once.
 */
const DRAINING_REFUSAL: ConnectErrorData = {
  code: ConnectErrorCode.NodeFull,
  message: "This node is shutting down: connect again (to another node) and resume with the last seq as sinceSeq",
  retryAfterSeconds: 1,
};

export async function createRealtime(httpServer: HttpServer, deps: RealtimeDeps): Promise<Realtime> {
  const limits: RealtimeLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const retention: Retention = { ...DEFAULT_RETENTION, ...deps.retention };
  const path = deps.path ?? REALTIME_PATH.dedicated;
  const pageSize = deps.pageSize ?? 500;
  const outbox = new Outbox(deps.db);
  const startSeq = await outbox.head();
  const networks = deps.networks ?? new NetworkDirectory(deps.db);
  const depth = new DeliveryDepth(networks, deps.logger);
  await depth.refresh();

  const adapter = deps.fanout.adapter();
  let draining = false;
  const io: RealtimeServer = new Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>(httpServer, {
    path,
    serveClient: false,
    maxHttpBufferSize: limits.maxMessageBytes,
    transports: deps.transports ?? ["polling", "websocket"],
    pingInterval: deps.pingIntervalMs ?? 25_000,
    pingTimeout: deps.pingTimeoutMs ?? 20_000,
    // A public, read-only API without cookies: any origin may connect (long-polling needs CORS).
    cors: { origin: "*", methods: ["GET", "POST"] },
    // New handshakes only (engine.io asks for connections without a session id): refused while
    // draining, and past admission's backstop (its middleware below answers with a code).
    allowRequest: (req, callback) => {
      if (draining) return answerRefusal(req, DRAINING_REFUSAL, () => callback(DRAINING_REFUSAL.message, false), 503);
      const refusal = admission.allowRequest(req);
      if (refusal) answerRefusal(req, refusal, () => callback(refusal.message, false));
      else callback(null, true);
    },
    ...(adapter ? { adapter } : {}),
  });

  const admission = installAdmission(io, {
    limits: { ...DEFAULT_ADMISSION, ...deps.admission },
    trustProxyHops: deps.trustProxyHops ?? 0,
    logger: deps.logger,
    cluster: deps.clusterCounter,
    memoryBytes: deps.memoryBytes,
  });

  const stream = new UpdateStream({
    outbox,
    logger: deps.logger,
    startSeq,
    pageSize,
    deliver: (update) => {
      // Once per update per node; the adapter writes to each socket of the union of rooms once.
      io.local.to(roomsForUpdate(update)).emit("bets:update", depth.payload(update));
    },
  });
  const createdAt = performance.now();
  let lastFeedAt: number | undefined;
  // Feed messages wait for the networks' heads (in order, and never long), so that what they carry
  // is delivered with its depth at the current head.
  let feedQueue: Promise<void> = Promise.resolve();
  // A traced message (the publisher's context with it) gets one delivery span on this node, from its
  // arrival to the fan-out of its updates to the rooms: per message, not per socket.
  const stopFeed = deps.fanout.onFeed(io, (message) => {
    lastFeedAt = performance.now();
    const queued = feedQueue;
    const attributes = { "messaging.batch.message_count": message.updates?.length ?? 0 };
    feedQueue = continueTraced(message.traceparent, "deliver bets:update", "consumer", attributes, () =>
      queued.then(() => depth.refreshWithin(HEADS_WAIT_MS)).then(() => stream.onMessage(message)),
    );
  });
  const local = watchFeed({
    logger: deps.logger,
    intervalMs: deps.localPollMs ?? 1_000,
    degraded: () => {
      if (!deps.fanout.connected()) return true;
      const timeout = deps.feedTimeoutMs ?? 0;
      return timeout > 0 && performance.now() - (lastFeedAt ?? createdAt) > timeout;
    },
    poll: async () => {
      const head = await outbox.head();
      await depth.refreshWithin(HEADS_WAIT_MS);
      stream.advanceTo(head);
    },
  });

  const counters = { replayStalls: 0, replayRefusals: 0 };
  const replayLane = deps.replayLane ? new BoundedLane(deps.replayLane, replayLaneRefusal) : undefined;
  const context: ConnectionContext = {
    stream,
    outbox,
    networks,
    depth,
    limits,
    retention,
    logger: deps.logger,
    replayPageSize: deps.replayPageSize ?? REPLAY_PAGE_UPDATES,
    trustProxyHops: deps.trustProxyHops ?? 0,
    ...(deps.replayBudget ? { replayBudget: deps.replayBudget } : {}),
    replayDrainTimeoutMs: deps.replayDrainTimeoutMs ?? 10_000,
    replayPrepaidPages: deps.replayPrepaidPages ?? 10,
    ...(replayLane ? { replayLane } : {}),
    firehose: new FirehoseSlots({ ...DEFAULT_FIREHOSE_LIMITS, ...deps.firehose }),
    counters,
  };
  const connections = new Map<string, ConnectionHandle>();
  io.on("connection", (socket) => {
    connections.set(socket.id, handleConnection(socket, context));
    socket.once("disconnect", () => connections.delete(socket.id));
  });
  coalesceWrites(io);
  const slowConsumers = watchSlowConsumers(io, {
    maxBytes: limits.maxBufferedBytes,
    intervalMs: deps.slowConsumerCheckMs ?? 500,
    logger: deps.logger,
  });
  deps.logger.info({ path, adapter: deps.fanout.kind, startSeq: startSeq.toString() }, "realtime node attached");

  /** Closes every local connection at the transport level: no Socket.IO disconnect packet, so clients reconnect. */
  const closeTransports = () => {
    for (const socket of io.of("/").sockets.values()) closeTransport(socket);
  };
  const socketsGone = (timeoutMs: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        // Namespace sockets: a bare engine.io connection that never joined one is closed by close().
        if (io.of("/").sockets.size > 0 && performance.now() < deadline) return;
        clearInterval(timer);
        resolve();
      };
      const deadline = performance.now() + timeoutMs;
      const timer = setInterval(check, 20);
      check();
    });

  let drained: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  return {
    io,
    path,
    lastSeq: () => stream.lastSeq,
    healed: () => stream.healed,
    delivered: () => stream.delivered,
    subscriptions: () => {
      let total = 0;
      for (const connection of connections.values()) total += connection.subscriptions();
      return total;
    },
    slowConsumerDisconnects: () => slowConsumers.disconnected(),
    admission: () => admission.stats(),
    firehose: () => context.firehose.stats(),
    replayStalls: () => counters.replayStalls,
    replayRefusals: () => counters.replayRefusals,
    replayLane: () => replayLane?.stats(),
    state: () => ({
      delivery: local.active() ? "local" : "feed",
      fanoutConnected: deps.fanout.connected(),
      feedAgeMs: lastFeedAt === undefined ? null : Math.round(performance.now() - lastFeedAt),
      draining,
      sockets: io.of("/").sockets.size,
    }),
    drain(graceMs) {
      drained ??= (async () => {
        draining = true;
        const deadline = performance.now() + graceMs;
        const open = [...connections.values()];
        deps.logger.info({ sockets: open.length, graceMs }, "draining realtime connections");
        io.local.emit("server:draining", { message: DRAINING_MESSAGE });
        // Requests in flight (a replay) finish first, within half the grace period.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(open.map((connection) => connection.idle())),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs / 2))),
        ]);
        clearTimeout(timer);
        closeTransports();
        await socketsGone(Math.max(0, deadline - performance.now()));
      })();
      return drained;
    },
    close() {
      closed ??= (async () => {
        draining = true;
        local.stop();
        slowConsumers.stop();
        stopFeed();
        stream.close();
        closeTransports();
        await io.of("/").adapter.close();
        io.engine.close();
        await admission.close();
      })();
      return closed;
    },
  };
}

interface FeedWatch {
  active(): boolean;
  stop(): void;
}

/**
 * Every `intervalMs`: when `degraded()`, run `poll` (one at a time). Logs the transitions only, and
 * a failing poll at most once a minute, so an outage of any length costs a few log lines.
 */
function watchFeed(options: { logger: Logger; intervalMs: number; degraded: () => boolean; poll: () => Promise<void> }): FeedWatch {
  let active = false;
  let polling = false;
  let lastFailureLog = -Infinity;
  const tick = () => {
    const degraded = options.degraded();
    if (degraded !== active) {
      active = degraded;
      if (active) options.logger.warn("feed unavailable: delivering from the outbox locally");
      else options.logger.info("feed restored: delivering from the publisher's feed");
    }
    if (!active || polling) return;
    polling = true;
    options.poll().then(
      () => (polling = false),
      (error: unknown) => {
        polling = false;
        if (performance.now() - lastFailureLog < 60_000) return;
        lastFailureLog = performance.now();
        // The kind of failure only: a driver's message may name hosts.
        const code = (error as { code?: unknown }).code;
        options.logger.warn({ code: typeof code === "string" ? code : "error" }, "reading the outbox for local delivery failed");
      },
    );
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return { active: () => active, stop: () => clearInterval(timer) };
}
