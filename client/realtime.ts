// The typed Socket.IO client of the bet feed, for browsers and Node. It keeps what a client must keep
// to never miss or repeat an update across reconnects:
//
//   - the seq of the last update it delivered (or the newest `bets:subscribed.seq`, if newer);
//   - after any reconnect — to the same node or, when it is gone, to the next URL — it subscribes
//     again to the whole subscription with `sinceSeq`: the node replays what was missed, in order;
//   - anything at or below that seq is dropped, so an update is delivered once, in seq order;
//   - REPLAY_WINDOW_EXCEEDED (too far behind): it subscribes live again and calls `onResync` so the
//     app re-reads its state through GraphQL.
//
// Events and payloads are the server's own types (realtime/events.ts).
import { io, type Socket } from "socket.io-client";
import {
  isErrorResponse,
  RealtimeErrorCode,
  REALTIME_PATH,
  type BetRef,
  type BetUpdatePayload,
  type ClientToServerEvents,
  type ErrorBody,
  type Response,
  type ServerToClientEvents,
  type SubscribedPayload,
  type SubscribeRequest,
} from "./wire/events.ts";

export type { BetRef, BetUpdatePayload, SubscribedPayload } from "./wire/events.ts";

export type FeedSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** What to follow; the same shape as `bets:subscribe` without `sinceSeq`. */
export interface FeedSubscription {
  wallets?: string[];
  bets?: BetRef[];
  chainIds?: number[];
  all?: boolean;
}

export type FeedState = "connecting" | "live" | "reconnecting" | "closed";

export interface FeedStatus {
  state: FeedState;
  /** The node this status is about. */
  url: string;
  /** Failed attempts since the feed was last live. */
  attempt: number;
}

export interface UpdateMeta {
  /** True when the update was replayed by a resume (`sinceSeq`) rather than pushed live. */
  replayed: boolean;
}

export interface BetsFeedOptions {
  /**
   * Realtime nodes (origins such as `https://rt1.example.com`), tried in turn: when a node fails or
   * is killed, the feed moves to the next one and resumes there. One URL behind a load balancer works too.
   */
  urls: string[];
  /** Socket.IO path: `/ws` on a dedicated realtime host (default), `/socket.io` on the API host. */
  path?: string;
  /** What to follow from the start (more with `subscribe`). */
  subscription?: FeedSubscription;
  /** Resume from a seq kept from an earlier session (e.g. stored by the app). */
  sinceSeq?: string;
  /**
   * On the first connection without `sinceSeq`, also replay the updates of the last `backlog`
   * seqs that match the subscription (with `all`, the latest bets), then go live.
   */
  backlog?: number;
  onUpdate(update: BetUpdatePayload, meta: UpdateMeta): void;
  /**
   * The node could not replay what was missed (REPLAY_WINDOW_EXCEEDED). The feed is live again from
   * `seq`; re-read the state through GraphQL. Updates keep arriving meanwhile: apply them idempotently.
   */
  onResync?(info: { seq: string; code: string }): void | Promise<void>;
  onStatus?(status: FeedStatus): void;
  /** A request the node refused for good (BAD_USER_INPUT, TOO_MANY_SUBSCRIPTIONS); the feed stays up. */
  onError?(error: ErrorBody): void;
  /** `["websocket"]` (default) needs no sticky sessions; add `"polling"` only behind sticky sessions. */
  transports?: ("websocket" | "polling")[];
  /** Backoff between attempts, doubled per failure, with jitter (default 250 ms … 5 s). */
  reconnectDelayMs?: { min: number; max: number };
  /** How long to wait for a connection or an acknowledgement (default 20 s). */
  timeoutMs?: number;
}

export interface FeedStats {
  delivered: number;
  /** Updates at or below the last delivered seq, dropped (a resume overlapping what was seen). */
  duplicatesDropped: number;
  /** Connections opened after the first. */
  reconnects: number;
}

export interface BetsFeed {
  /** The seq to resume from (the last delivered update's, or the newest acknowledged), if any. */
  readonly lastSeq: string | undefined;
  readonly stats: Readonly<FeedStats>;
  /** Adds to the subscription. Resolves with the node's state, or undefined while offline (sent on reconnect). */
  subscribe(change: FeedSubscription): Promise<SubscribedPayload | undefined>;
  /** Removes from the subscription (`{}` removes everything). */
  unsubscribe(change: FeedSubscription): Promise<SubscribedPayload | undefined>;
  close(): void;
}

/** The subscription the feed wants, kept across connections and normalised like the server does. */
class DesiredState {
  wallets = new Set<string>();
  bets = new Map<string, BetRef>();
  chainIds = new Set<number>();
  all = false;

  add(change: FeedSubscription): void {
    for (const wallet of change.wallets ?? []) this.wallets.add(wallet.toLowerCase());
    for (const bet of change.bets ?? []) this.bets.set(`${bet.chainId}:${bet.betId}`, { chainId: bet.chainId, betId: bet.betId });
    for (const chainId of change.chainIds ?? []) this.chainIds.add(chainId);
    if (change.all) this.all = true;
  }

  remove(change: FeedSubscription): void {
    const everything = !change.wallets && !change.bets && !change.chainIds && !change.all;
    if (everything) {
      this.restore(new DesiredState());
      return;
    }
    for (const wallet of change.wallets ?? []) this.wallets.delete(wallet.toLowerCase());
    for (const bet of change.bets ?? []) this.bets.delete(`${bet.chainId}:${bet.betId}`);
    for (const chainId of change.chainIds ?? []) this.chainIds.delete(chainId);
    if (change.all) this.all = false;
  }

  copy(): DesiredState {
    const copy = new DesiredState();
    copy.restore(this);
    return copy;
  }

  restore(from: DesiredState): void {
    this.wallets = new Set(from.wallets);
    this.bets = new Map(from.bets);
    this.chainIds = new Set(from.chainIds);
    this.all = from.all;
  }

  isEmpty(): boolean {
    return this.wallets.size === 0 && this.bets.size === 0 && this.chainIds.size === 0 && !this.all;
  }

  request(): SubscribeRequest {
    const request: SubscribeRequest = {};
    if (this.wallets.size > 0) request.wallets = [...this.wallets];
    if (this.bets.size > 0) request.bets = [...this.bets.values()];
    if (this.chainIds.size > 0) request.chainIds = [...this.chainIds];
    if (this.all) request.all = true;
    return request;
  }
}

/** Errors after which the same request may succeed later (on this node or another one). */
const TRANSIENT: ReadonlySet<string> = new Set([RealtimeErrorCode.ServiceUnavailable, RealtimeErrorCode.RateLimited]);

class TransientFailure extends Error {
  /** The server's hint (`retryAfterSeconds`), when it gave one: the next attempt waits at least this long. */
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs = 0) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

const failureOf = (error: ErrorBody): TransientFailure => new TransientFailure(error.message, (error.retryAfterSeconds ?? 0) * 1000);

export function openBetsFeed(options: BetsFeedOptions): BetsFeed {
  if (options.urls.length === 0) throw new Error("openBetsFeed: at least one URL is needed");
  const path = options.path ?? REALTIME_PATH.dedicated;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const delays = options.reconnectDelayMs ?? { min: 250, max: 5_000 };
  const desired = new DesiredState();
  desired.add(options.subscription ?? {});
  const stats: FeedStats = { delivered: 0, duplicatesDropped: 0, reconnects: 0 };

  let lastSeq: bigint | undefined = options.sinceSeq === undefined ? undefined : BigInt(options.sinceSeq);
  let current: FeedSocket | undefined;
  let replaying = false;
  let urlIndex = 0;
  let attempt = 0;
  let opened = 0;
  let closed = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The resume in flight on the current connection: changes wait for it (see `change`). */
  let resuming: Promise<unknown> | undefined;

  const status = (state: FeedState) => options.onStatus?.({ state, url: options.urls[urlIndex % options.urls.length]!, attempt });
  const advance = (seq: string) => {
    const value = BigInt(seq);
    if (lastSeq === undefined || value > lastSeq) lastSeq = value;
  };

  const deliver = (socket: FeedSocket, update: BetUpdatePayload) => {
    if (socket !== current) return; // a late event from a connection already given up
    const seq = BigInt(update.seq);
    if (lastSeq !== undefined && seq <= lastSeq) {
      stats.duplicatesDropped++;
      return;
    }
    lastSeq = seq;
    stats.delivered++;
    options.onUpdate(update, { replayed: replaying });
  };

  /** Gives up this connection and tries the next URL after a backoff. */
  const retry = (socket: FeedSocket, notBeforeMs = 0) => {
    if (socket !== current || closed) return;
    current = undefined;
    socket.removeAllListeners();
    socket.disconnect();
    urlIndex++;
    const base = Math.min(delays.max, delays.min * 2 ** attempt);
    attempt++;
    status("reconnecting");
    // A refusal's retryAfterSeconds (a full node, a spent budget) is a floor, not a hint to beat.
    retryTimer = setTimeout(connect, Math.max(notBeforeMs, base / 2 + Math.random() * (base / 2)));
  };

  const ask = async (socket: FeedSocket, event: keyof ClientToServerEvents, request: SubscribeRequest): Promise<Response<SubscribedPayload>> =>
    socket.timeout(timeoutMs).emitWithAck(event, request);

  /** Subscribes on a fresh connection: resume from `lastSeq` if there is one, else go live (with the backlog). */
  const resume = async (socket: FeedSocket): Promise<{ seq: string; code: string } | undefined> => {
    replaying = true;
    const request = desired.request();
    if (lastSeq === undefined && options.backlog && !desired.isEmpty()) {
      // The node's position, from an empty unsubscribe; the backlog is a resume from before it.
      const position = await ask(socket, "bets:unsubscribe", {});
      if (isErrorResponse(position)) throw failureOf(position.error);
      const head = BigInt(position.seq);
      request.sinceSeq = String(head > BigInt(options.backlog) ? head - BigInt(options.backlog) : 0n);
    } else if (lastSeq !== undefined) {
      request.sinceSeq = String(lastSeq);
    }
    if (desired.isEmpty()) return undefined;
    const state = await ask(socket, "bets:subscribe", request);
    if (!isErrorResponse(state)) {
      advance(state.seq);
      return undefined;
    }
    if (TRANSIENT.has(state.error.code)) throw failureOf(state.error);
    if (state.error.code !== RealtimeErrorCode.ReplayWindowExceeded) {
      options.onError?.(state.error);
      return undefined;
    }
    // Too far behind to replay: live from now, and the app re-reads what it missed.
    delete request.sinceSeq;
    const live = await ask(socket, "bets:subscribe", request);
    if (isErrorResponse(live)) throw failureOf(live.error);
    advance(live.seq);
    return { seq: live.seq, code: state.error.code };
  };

  const connect = () => {
    retryTimer = undefined;
    if (closed) return;
    const url = options.urls[urlIndex % options.urls.length]!;
    const socket: FeedSocket = io(url, { path, transports: options.transports ?? ["websocket"], reconnection: false, forceNew: true, timeout: timeoutMs });
    current = socket;
    if (opened++ > 0) stats.reconnects++;
    status("connecting");
    socket.on("bets:update", (update) => deliver(socket, update));
    socket.on("connect_error", () => retry(socket));
    // Whatever the reason (node killed, drained, network), except our own close: go elsewhere.
    socket.on("disconnect", () => retry(socket));
    socket.on("connect", () => {
      resuming = resume(socket).then(
        (resync) => {
          if (socket !== current) return;
          replaying = false;
          attempt = 0;
          status("live");
          // The app's re-read runs while updates keep arriving; its errors are the app's own.
          if (resync) void options.onResync?.(resync);
        },
        (error: unknown) => retry(socket, error instanceof TransientFailure ? error.retryAfterMs : 0),
      );
    });
  };

  const change = async (event: "bets:subscribe" | "bets:unsubscribe", request: FeedSubscription): Promise<SubscribedPayload | undefined> => {
    const before = desired.copy();
    if (event === "bets:subscribe") desired.add(request);
    else desired.remove(request);
    // A change sent while the connection's first subscribe is being prepared could overtake it.
    await resuming;
    const socket = current;
    // Offline (or between connections): the next resume sends the whole desired state.
    if (!socket?.connected) return undefined;
    // Requests on one socket are processed in order: after a resume in flight, never before it.
    const answer = await ask(socket, event, request);
    if (isErrorResponse(answer)) {
      if (!TRANSIENT.has(answer.error.code)) desired.restore(before);
      throw Object.assign(new Error(`${answer.error.code}: ${answer.error.message}`), { code: answer.error.code });
    }
    if (socket === current) advance(answer.seq);
    return answer;
  };

  connect();
  return {
    get lastSeq() {
      return lastSeq === undefined ? undefined : String(lastSeq);
    },
    stats,
    subscribe: (request) => change("bets:subscribe", request),
    unsubscribe: (request) => change("bets:unsubscribe", request),
    close() {
      if (closed) return;
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      const socket = current;
      current = undefined;
      socket?.removeAllListeners();
      socket?.disconnect();
      status("closed");
    },
  };
}
