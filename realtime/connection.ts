// One client connection: validates `bets:subscribe` / `bets:unsubscribe`, keeps the socket's
// subscription and its rooms, rate-limits, and runs resumes (`sinceSeq`) without gap or duplicate.
// Three parts, each with its own state: the rate limit (a token bucket), the request queue (one
// request at a time, a bound on those waiting), and the subscription (its state, its rooms, resumes).
//
// A resume, step by step (all on this node):
//   1. synchronously: leave every room and open a sink on the stream (stream.ts), so from here on
//      updates for this socket are buffered, not sent;
//   2. check the request (known chains, replay window); a refusal flushes the sink and rejoins the
//      old rooms, as if nothing happened;
//   3. replay matching outbox rows with seq > sinceSeq, in order, page by page → cursor;
//   4. stream.catchUp(cursor): the node has delivered everything ≤ cursor, so whatever it delivers
//      from now on is newer than the replay;
//   5. synchronously: send the buffered updates with seq > cursor (those ≤ cursor were replayed),
//      close the sink, join the new rooms, answer `bets:subscribed` with the node's lastSeq.
// No update can slip between 5's steps (one tick), nor be sent twice (the cursor filters the buffer,
// step 4 keeps later live ones above it).
import type { BoundedLane, LaneRefusal } from "../core/bounded-lane.ts";
import { clientAddress } from "../core/client-address.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkDirectory } from "../core/networks.ts";
import { closeTransport, QueuedBytes, waitForRoom } from "./backpressure.ts";
import type { DeliveryDepth } from "./depth.ts";
import { FirehoseHold, type FirehoseSlots } from "./firehose.ts";
import { RealtimeErrorCode, type ClientEventName, type ErrorBody, type Response, type SubscribedPayload } from "./events.ts";
import type { RealtimeSocket } from "./fanout.ts";
import { MAX_SEQ, type Outbox, type Retention, type StoredBetUpdate } from "../core/outbox.ts";
import type { ReplaySink, UpdateStream } from "./stream.ts";
import {
  addToState,
  chainIdsOf,
  emptyState,
  isFirehose,
  limitViolation,
  matches,
  parseSubscribe,
  parseUnsubscribe,
  removeFromState,
  roomsForState,
  stateToPayload,
  type SubscriptionLimits,
  type SubscriptionState,
} from "./subscription.ts";

export interface RealtimeLimits extends SubscriptionLimits {
  /** Client events per socket per second (a token bucket of this size, refilled at this rate). */
  eventsPerSecond: number;
  /** Socket.IO message size (maxHttpBufferSize), bytes. */
  maxMessageBytes: number;
  /** Bytes queued for one socket (it does not read) beyond which its connection is closed (0: no bound; backpressure.ts). */
  maxBufferedBytes: number;
}

export const DEFAULT_LIMITS: RealtimeLimits = {
  maxSubscriptions: 200,
  maxChainIds: 32,
  eventsPerSecond: 20,
  maxMessageBytes: 16 * 1024,
  maxBufferedBytes: 4 * 1024 * 1024,
};

export interface ConnectionContext {
  stream: UpdateStream;
  outbox: Outbox;
  networks: NetworkDirectory;
  /** Every update sent goes through it: confirmations and finality as of delivery. */
  depth: DeliveryDepth;
  limits: RealtimeLimits;
  retention: Retention;
  logger: Logger;
  /** Outbox rows per replay read. */
  replayPageSize: number;
  /** Proxies whose X-Forwarded-For entries name the client: the replay budget's key. */
  trustProxyHops: number;
  /** Charged per replay page, per client address; none: replays are not charged. */
  replayBudget?: ReplayBudget;
  /**
   * Pages a replay pays for before its first read: the pages its seq range may hold (head − sinceSeq),
   * at most this many; pages past them are charged one by one. Nothing is refunded to a replay its
   * client left: a reconnect loop pays for the deep replay it restarts each time, not for one page.
   */
  replayPrepaidPages: number;
  /** How long a replay waits for its socket to take what is queued before it cuts the connection. */
  replayDrainTimeoutMs: number;
  /** The node's bulkhead for replay page reads, keyed by client address (replayLaneRefusal refuses); none: unbounded. */
  replayLane?: BoundedLane;
  /** The node's firehose subscriptions, per node and per client address (firehose.ts). */
  firehose: FirehoseSlots;
  /** Counts for metrics: a replay's socket cut for not reading, a replay refused by the budget. */
  counters: { replayStalls: number; replayRefusals: number };
}

/**
 * A per-key budget of replay pages: `take` charges `pages` (default 1), all or nothing; `refund`
 * gives back pages paid up front that a completed replay did not read. The composition root
 * decides which store, and what a page costs in it (bin/wiring.ts replayBudget).
 */
export interface ReplayBudget {
  take(key: string, now: number, pages?: number): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
  refund?(key: string, now: number, pages: number): Promise<void>;
}

/** The replay of a socket that stopped reading was given up and its connection closed: nothing to answer. */
class ReplayAbandoned extends Error {}

/**
 * Bytes a replay lets queue for its socket (engine.io's buffer and the WebSocket's) before it waits
 * for the socket to take them: a replay never sends past a stalled socket's watermark.
 */
export const REPLAY_WATERMARK_BYTES = 256 * 1024;

/**
 * Outbox rows a replay reads at once: the unit it pays for (REALTIME_REPLAY_PAGE_POINTS). Small
 * enough that a page's price, matched to its CPU, stays well inside a client's budget.
 */
export const REPLAY_PAGE_UPDATES = 100;

/** Operations waiting on one socket beyond which new ones are refused as RATE_LIMITED. */
const MAX_PENDING = 8;

class Refusal extends Error {
  readonly code: RealtimeErrorCode;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: RealtimeErrorCode, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * A replay page the node's replay lane refused (its address's share of the queue full, or no room
 * within the deadline). SERVICE_UNAVAILABLE, not RATE_LIMITED: the node is busy, not necessarily
 * this client; the resume is cut short like a spent budget's (the subscription is now empty).
 */
export const replayLaneRefusal: LaneRefusal = (reason, retryAfterSeconds) =>
  new Refusal(
    RealtimeErrorCode.ServiceUnavailable,
    `This node is busy with replays (${reason}; the subscription is now empty): resume with your last seq after ${retryAfterSeconds} s, or re-read through GraphQL`,
    retryAfterSeconds,
  );

type Ack = (response: Response<SubscribedPayload>) => void;

class TokenBucket {
  private tokens: number;
  private at = performance.now();
  private readonly rate: number;
  constructor(rate: number) {
    this.rate = rate;
    this.tokens = rate;
  }
  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

const CLIENT_EVENTS = new Set<string>(["bets:subscribe", "bets:unsubscribe"]);

/**
 * The socket's arguments as sent: `(payload, ack?)`. Socket.IO always puts the acknowledgement last,
 * so `emit(event, ack)` has no payload, and `emit(event, payload, extra…, ack)` has extra
 * arguments, refused (still answered on the ack) rather than silently ignored.
 */
function splitArgs(args: unknown[]): { payload: unknown; ack: Ack | undefined; extra: boolean } {
  const last = args.at(-1);
  const ack = typeof last === "function" ? (last as Ack) : undefined;
  const rest = ack ? args.slice(0, -1) : args;
  return { payload: rest[0], ack, extra: rest.length > 1 };
}

function refuse(socket: RealtimeSocket, event: ClientEventName, ack: Ack | undefined, error: ErrorBody): void {
  socket.emit("bets:error", { ...error, event });
  ack?.({ error });
}

/** Every event beyond `eventsPerSecond` (a token bucket per socket) is answered RATE_LIMITED and dropped. */
function limitRate(socket: RealtimeSocket, eventsPerSecond: number): void {
  const bucket = new TokenBucket(eventsPerSecond);
  socket.use(([event, ...args], next) => {
    if (bucket.take()) return next();
    const ack = args.at(-1);
    const error: ErrorBody = { code: RealtimeErrorCode.RateLimited, message: `More than ${eventsPerSecond} events per second: slow down` };
    if (typeof ack === "function") (ack as Ack)({ error });
    if (CLIENT_EVENTS.has(event)) socket.emit("bets:error", { ...error, event: event as ClientEventName });
  });
}

/** The socket's requests, run one after the other in the order sent; at most MAX_PENDING waiting. */
class RequestQueue {
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;

  private readonly socket: RealtimeSocket;
  private readonly logger: Logger;
  constructor(socket: RealtimeSocket, logger: Logger) {
    this.socket = socket;
    this.logger = logger;
  }

  /** Resolves when every request received so far has been answered. */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Queues `run(payload)`; its result is sent as `bets:subscribed` (and on the ack), a refusal as `bets:error`. */
  enqueue(event: ClientEventName, args: unknown[], run: (payload: unknown) => Promise<SubscribedPayload>): void {
    const { socket } = this;
    const { payload, ack, extra } = splitArgs(args);
    if (extra) {
      refuse(socket, event, ack, {
        code: RealtimeErrorCode.BadUserInput,
        message: `${event} takes one payload object (and an acknowledgement): extra arguments`,
      });
      return;
    }
    if (this.pending >= MAX_PENDING) {
      refuse(socket, event, ack, { code: RealtimeErrorCode.RateLimited, message: "Too many requests waiting on this socket: wait for their acknowledgements" });
      return;
    }
    this.pending++;
    this.queue = this.queue
      .then(() => run(payload))
      .then(
        (result) => {
          if (!socket.connected) return;
          socket.emit("bets:subscribed", result);
          ack?.(result);
        },
        (error: unknown) => {
          if (!socket.connected || error instanceof ReplayAbandoned) return;
          if (error instanceof Refusal) {
            const retry = error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds };
            return refuse(socket, event, ack, { code: error.code, message: error.message, ...retry });
          }
          this.logger.error({ err: error, event }, "realtime request failed");
          refuse(socket, event, ack, { code: RealtimeErrorCode.ServiceUnavailable, message: "Service temporarily unavailable: retry later" });
        },
      )
      .finally(() => this.pending--);
  }
}

/** The socket's subscription and the rooms implementing it; changes to it, resumes included. */
class SocketSubscription {
  private state: SubscriptionState = emptyState();
  private joined = new Set<string>();
  private readonly firehose: FirehoseHold;

  private readonly socket: RealtimeSocket;
  private readonly ctx: ConnectionContext;
  constructor(socket: RealtimeSocket, ctx: ConnectionContext) {
    this.socket = socket;
    this.ctx = ctx;
    this.firehose = new FirehoseHold(ctx.firehose, clientAddress(socket.request, ctx.trustProxyHops));
  }

  /** The socket left: its firehose slot goes back. */
  leave(): void {
    this.firehose.leave();
  }

  /** Before `next` is applied: a firehose needs a slot of the node's (refused with the request, nothing changed). */
  private claimFirehose(next: SubscriptionState): void {
    const refusal = isFirehose(next) ? this.firehose.claim() : undefined;
    if (refusal) throw new Refusal(refusal.code, refusal.message, refusal.retryAfterSeconds);
  }

  private setState(state: SubscriptionState): void {
    this.state = state;
    this.firehose.keep(isFirehose(state));
  }

  /** Items in the subscription: wallets + bets + chainIds, and 1 for `all`. */
  size(): number {
    const { state } = this;
    return state.wallets.size + state.bets.size + state.chainIds.size + (state.all ? 1 : 0);
  }

  async subscribe(payload: unknown): Promise<SubscribedPayload> {
    const parsed = parseSubscribe(payload);
    if (!parsed.ok) throw new Refusal(RealtimeErrorCode.BadUserInput, parsed.message);
    const change = parsed.value;
    const next = addToState(this.state, change);
    const violation = limitViolation(next, this.ctx.limits);
    if (violation) throw new Refusal(RealtimeErrorCode.TooManySubscriptions, violation);

    if (change.sinceSeq === undefined) {
      await this.checkChains(chainIdsOf(change));
      this.claimFirehose(next);
      this.setState(next);
      this.setRooms(roomsForState(next));
      return stateToPayload(next, this.ctx.stream.lastSeq);
    }
    return this.resume(next, change.sinceSeq, chainIdsOf(change));
  }

  async unsubscribe(payload: unknown): Promise<SubscribedPayload> {
    const parsed = parseUnsubscribe(payload);
    if (!parsed.ok) throw new Refusal(RealtimeErrorCode.BadUserInput, parsed.message);
    this.setState(removeFromState(this.state, parsed.value));
    this.setRooms(roomsForState(this.state));
    return stateToPayload(this.state, this.ctx.stream.lastSeq);
  }

  private setRooms(rooms: Set<string>): void {
    const { socket } = this;
    if (!socket.connected) return; // a disconnected socket joining rooms would stay in them
    for (const room of this.joined) if (!rooms.has(room)) socket.leave(room);
    socket.join([...rooms].filter((room) => !this.joined.has(room)));
    this.joined = rooms;
  }

  private async checkChains(chainIds: number[]): Promise<void> {
    if (chainIds.length === 0) return;
    const known = await this.ctx.networks.all();
    const unknown = chainIds.find((chainId) => !known.has(chainId));
    if (unknown !== undefined) {
      throw new Refusal(RealtimeErrorCode.BadUserInput, `Unknown chainId ${unknown}: see networkConfigs for the indexed networks`);
    }
  }

  private async resume(next: SubscriptionState, since: bigint, chainIds: number[]): Promise<SubscribedPayload> {
    const { socket, ctx } = this;
    // 1. Stop live delivery; buffer what the current state would have received meanwhile.
    const previous = this.state;
    this.setRooms(new Set());
    const sink = ctx.stream.openSink((update) => matches(previous, update));
    let prepaid = 1;
    try {
      // 2. Checks; a refusal restores the previous state without a gap.
      try {
        await this.checkChains(chainIds);
        if (since > MAX_SEQ) throw new Refusal(RealtimeErrorCode.ReplayWindowExceeded, `sinceSeq ${since} is ahead of the newest stored update`);
        const window = await ctx.outbox.checkWindow(since, ctx.retention);
        if (!window.ok) throw new Refusal(RealtimeErrorCode.ReplayWindowExceeded, window.message ?? "sinceSeq is outside the replay window");
        // What the replay pays before it reads: the pages its range may hold, up to the bound.
        const rangePages = window.head === undefined ? 1 : Number((window.head - since) / BigInt(ctx.replayPageSize)) + 1;
        prepaid = Math.max(1, Math.min(ctx.replayPrepaidPages, rangePages));
        this.claimFirehose(next);
      } catch (error) {
        this.goLive(sink, previous, 0n);
        throw error;
      }
      this.setState(next);
      sink.matches = (update) => matches(next, update);

      let cursor = since;
      let pagesRead = 0;
      try {
        // 3. Replay from the table, paid up front then page by page, each update sent only while the socket takes them.
        for (let page = 0; ; page++) {
          pagesRead = page + 1;
          const rows = await this.readReplayPage(cursor, next, page === 0 ? prepaid : page < prepaid ? 0 : 1, page === 0);
          if (!socket.connected) return stateToPayload(next, cursor);
          // The publisher prunes from the oldest row up: if it passed the cursor while this replay
          // ran (the resume aged out of the window meanwhile), rows may be missing from this page.
          const oldest = await ctx.outbox.oldest();
          if (oldest !== null && oldest > cursor + 1n) {
            throw new Refusal(RealtimeErrorCode.ReplayWindowExceeded, `sinceSeq ${since} left the replay window during the replay: re-read through GraphQL`);
          }
          await ctx.depth.refresh();
          const watermark = this.replayWatermark();
          const queued = new QueuedBytes(socket);
          for (const update of rows) {
            // Waits only when the socket is behind: an await per update was a tenth of the CPU.
            if (!socket.connected || queued.now() > watermark) await this.roomForReplay(watermark);
            socket.emit("bets:update", ctx.depth.payload(update));
            cursor = BigInt(update.seq);
          }
          if (rows.length < ctx.replayPageSize) break;
        }
        // Settled with what it read: a filtered range holds fewer pages than its seqs span. A client
        // that leaves or stalls mid-replay got here by no path, so a reconnect loop still pays in full.
        if (pagesRead < prepaid) await this.refundReplay(prepaid - pagesRead);
        // 4. Nothing at or below the cursor can still arrive live.
        await ctx.stream.catchUp(cursor);
      } catch (error) {
        // Half a replay cannot go live without a gap: the socket ends unsubscribed and is told so.
        this.setState(emptyState());
        throw error;
      }
      // 5. Buffered updates above the cursor, then live.
      this.goLive(sink, next, cursor);
      return stateToPayload(next, ctx.stream.lastSeq);
    } finally {
      ctx.stream.closeSink(sink);
    }
  }

  /**
   * One replay page from the outbox, in the node's replay lane when it has one: only the read holds
   * a slot (sending waits for the socket outside it, so a stalled socket never holds the lane). The
   * `pages` due before it are charged once the lane admits it: a page the lane refuses was never
   * read, so costs nothing.
   */
  private readReplayPage(after: bigint, filter: SubscriptionState, pages: number, first: boolean): Promise<StoredBetUpdate[]> {
    const { ctx } = this;
    const read = async () => {
      await this.chargeReplay(pages, first);
      return ctx.outbox.after(after, { filter, limit: ctx.replayPageSize });
    };
    return ctx.replayLane ? ctx.replayLane.run(clientAddress(this.socket.request, ctx.trustProxyHops), read) : read();
  }

  /** Charges `pages` replay pages to the client's budget; refuses RATE_LIMITED when it cannot pay them. */
  private async chargeReplay(pages: number, first: boolean): Promise<void> {
    const { ctx } = this;
    if (!ctx.replayBudget || pages === 0) return;
    let decision: { allowed: boolean; retryAfterSeconds: number };
    try {
      decision = await ctx.replayBudget.take(clientAddress(this.socket.request, ctx.trustProxyHops), Date.now(), pages);
    } catch (error) {
      // The configured store falls back in process itself; one that still fails does not stop replays.
      ctx.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "replay budget unavailable: not charging");
      return;
    }
    if (decision.allowed) return;
    ctx.counters.replayRefusals++;
    const what = first ? "This client's replay budget is spent" : "This client's replay budget ran out during the replay (the subscription is now empty)";
    throw new Refusal(
      RealtimeErrorCode.RateLimited,
      `${what}: resume with your last seq after ${decision.retryAfterSeconds} s, or re-read through GraphQL`,
      decision.retryAfterSeconds,
    );
  }

  /** Gives back `pages` paid up front and not read; a store that fails only costs the client them. */
  private async refundReplay(pages: number): Promise<void> {
    const { ctx } = this;
    if (!ctx.replayBudget?.refund) return;
    try {
      await ctx.replayBudget.refund(clientAddress(this.socket.request, ctx.trustProxyHops), Date.now(), pages);
    } catch (error) {
      ctx.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "replay budget unavailable: unread pages not given back");
    }
  }

  /** Bytes a replay lets queue for the socket: below the slow-consumer bound too, so that the sweep never cuts a socket its replay is waiting on. */
  private replayWatermark(): number {
    const { maxBufferedBytes } = this.ctx.limits;
    return maxBufferedBytes > 0 ? Math.min(REPLAY_WATERMARK_BYTES, maxBufferedBytes / 2) : REPLAY_WATERMARK_BYTES;
  }

  /**
   * Waits while more than `bound` is queued for the socket; past the deadline, closes
   * its connection (queue discarded: a client that does not read would never take it) and gives up.
   */
  private async roomForReplay(bound: number): Promise<void> {
    const { socket, ctx } = this;
    if (await waitForRoom(socket, { belowBytes: bound, timeoutMs: ctx.replayDrainTimeoutMs })) return;
    if (socket.connected) {
      ctx.counters.replayStalls++;
      ctx.logger.warn({ socket: socket.id, replayDrainTimeoutMs: ctx.replayDrainTimeoutMs }, "closing a connection that stopped reading its replay");
      closeTransport(socket, { discardQueued: true });
    }
    throw new ReplayAbandoned();
  }

  /** Synchronously: flush the sink above `after`, close it, join the rooms of `target`. */
  private goLive(sink: ReplaySink, target: SubscriptionState, after: bigint): void {
    for (const update of sink.buffer) {
      if (BigInt(update.seq) > after) this.socket.emit("bets:update", this.ctx.depth.payload(update));
    }
    sink.buffer.length = 0;
    this.ctx.stream.closeSink(sink);
    this.setRooms(roomsForState(target));
  }
}

export interface ConnectionHandle {
  /** Resolves when every request received so far on this socket has been answered. */
  idle(): Promise<void>;
  /** Items in the socket's subscription: wallets + bets + chainIds, and 1 for `all`. */
  subscriptions(): number;
}

export function handleConnection(socket: RealtimeSocket, ctx: ConnectionContext): ConnectionHandle {
  limitRate(socket, ctx.limits.eventsPerSecond);
  const requests = new RequestQueue(socket, ctx.logger);
  const subscription = new SocketSubscription(socket, ctx);
  socket.on("bets:subscribe", (...args: unknown[]) => requests.enqueue("bets:subscribe", args, (payload) => subscription.subscribe(payload)));
  socket.on("bets:unsubscribe", (...args: unknown[]) => requests.enqueue("bets:unsubscribe", args, (payload) => subscription.unsubscribe(payload)));
  socket.once("disconnect", () => subscription.leave());
  return {
    idle: () => requests.idle(),
    subscriptions: () => subscription.size(),
  };
}
