// The realtime contract (docs/reference/realtime.md), typed once. The server, the tests
// and the client package import these types; nothing else declares a Socket.IO event.
//
//   const socket: Socket<ServerToClientEvents, ClientToServerEvents> = io(url, { path: "/ws", transports: ["websocket"] });
//   socket.on("bets:update", (update) => …);
//   const state = await socket.emitWithAck("bets:subscribe", { wallets: [address], sinceSeq });
//
// Wire conventions: on-chain integers and `seq` are decimal strings, addresses lowercase hex, chain
// ids JSON numbers. Payloads only ever gain fields.
import type { BetJson } from "../core/bet-json.ts";

/** Where a realtime node serves Socket.IO: the dedicated realtime host, or the API host itself. */
export const REALTIME_PATH = { dedicated: "/ws", gateway: "/socket.io" } as const;

/**
 * What changed: PLACED, SETTLED, REFUNDED, REMOVED (a reorg took the bet out), and FINALIZED — sent
 * once, after the SETTLED or REFUNDED update, when that latest change reaches the network's
 * confirmations (the bet itself is unchanged; its `finalized` is now true).
 */
export type BetUpdateType = "PLACED" | "SETTLED" | "REFUNDED" | "REMOVED" | "FINALIZED";

export interface BetRef {
  chainId: number;
  /** UInt256 decimal string. */
  betId: string;
}

/** `bets:subscribe`: every field optional; lists are added to the socket's subscription. */
export interface SubscribeRequest {
  /** Players to follow (any case; mixed case must be EIP-55). */
  wallets?: string[];
  bets?: BetRef[];
  /** Narrows wallets, bets and `all` to these chains; alone it means every bet of these chains. */
  chainIds?: number[];
  /** The public firehose. `false` is the same as leaving it out. */
  all?: boolean;
  /** UInt256 decimal string: replay every stored update after it that matches, then go live. */
  sinceSeq?: string;
}

/** `bets:unsubscribe`: the listed items are removed; `{}` ends everything. */
export type UnsubscribeRequest = Omit<SubscribeRequest, "sinceSeq">;

/** `bets:subscribed` and the acknowledgement of both client events: the socket's whole state. */
export interface SubscribedPayload {
  wallets: string[];
  bets: BetRef[];
  chainIds: number[];
  all: boolean;
  /**
   * The newest seq this connection is live from: every matching update with a greater seq will
   * be delivered, so it is a valid `sinceSeq` for a later resume.
   */
  seq: string;
}

/** `bets:update`: one lifecycle change of one bet, delivered once per socket, in seq order. */
export interface BetUpdatePayload {
  /** Global, strictly increasing, assigned at commit (UInt256 decimal string). */
  seq: string;
  type: BetUpdateType;
  chainId: number;
  betId: string;
  /** The bet as the GraphQL `Bet` serialises it (with `result` when settled); `confirmations` and `finalized` as of delivery. */
  bet: BetJson;
}

export const RealtimeErrorCode = {
  BadUserInput: "BAD_USER_INPUT",
  TooManySubscriptions: "TOO_MANY_SUBSCRIPTIONS",
  RateLimited: "RATE_LIMITED",
  ReplayWindowExceeded: "REPLAY_WINDOW_EXCEEDED",
  /**
   * The database could not be read (retry later). Not among the contract's four Socket.IO codes:
   * borrowed from its general error table rather than answering a failure as bad input.
   */
  ServiceUnavailable: "SERVICE_UNAVAILABLE",
} as const;
export type RealtimeErrorCode = (typeof RealtimeErrorCode)[keyof typeof RealtimeErrorCode];

export interface ErrorBody {
  code: RealtimeErrorCode;
  message: string;
  /**
   * With `RATE_LIMITED` from the replay budget, or `SERVICE_UNAVAILABLE` from the replay lane:
   * seconds until a replay of this client may start; with either refusing a firehose subscription
   * (firehose.ts): seconds until one may be free.
   */
  retryAfterSeconds?: number;
}

/**
 * A refused connection (admission, at the handshake): socket.io-client's `connect_error` carries it
 * as `error.data`, and `error.message` is the same sentence as `message`. The socket does not
 * connect and is not retried by the stock client's reconnection: wait `retryAfterSeconds`, then
 * connect again (another node may have room sooner).
 */
export const ConnectErrorCode = {
  /** This client address already holds the most sockets allowed per address (on this node or across the cluster). */
  TooManyConnections: "TOO_MANY_CONNECTIONS",
  /** The node holds the most sockets it takes, or its memory is past its budget: try again later or elsewhere. */
  NodeFull: "NODE_FULL",
} as const;
export type ConnectErrorCode = (typeof ConnectErrorCode)[keyof typeof ConnectErrorCode];

export interface ConnectErrorData {
  code: ConnectErrorCode;
  message: string;
  retryAfterSeconds: number;
}

export type ClientEventName = keyof ClientToServerEvents;

/** `bets:error`: a refused subscribe/unsubscribe (the socket stays connected and usable). */
export interface BetsErrorPayload extends ErrorBody {
  event: ClientEventName;
}

/** What an acknowledgement callback receives. */
export type Response<T> = T | { error: ErrorBody };

export function isErrorResponse<T extends object>(response: Response<T>): response is { error: ErrorBody } {
  return "error" in response;
}

export interface ClientToServerEvents {
  "bets:subscribe": (request: SubscribeRequest, ack?: (response: Response<SubscribedPayload>) => void) => void;
  "bets:unsubscribe": (request: UnsubscribeRequest, ack?: (response: Response<SubscribedPayload>) => void) => void;
}

/**
 * `server:draining`: the node is shutting down. It then closes the connection at the transport level
 * (not with a Socket.IO disconnect, after which socket.io-client would not reconnect): a stock
 * client reconnects by itself, through the load balancer to another node, and resumes with `sinceSeq`.
 */
export interface DrainingNotice {
  message: string;
}

export interface ServerToClientEvents {
  "bets:subscribed": (state: SubscribedPayload) => void;
  "bets:update": (update: BetUpdatePayload) => void;
  "bets:error": (error: BetsErrorPayload) => void;
  "server:draining": (notice: DrainingNotice) => void;
}

// ---------------------------------------------------------------------------------------------
// Between servers (not part of the public contract): the publisher's feed to every realtime node.
// ---------------------------------------------------------------------------------------------

/** One outbox row as the feed carries it: the public payload plus the player (for wallet rooms). */
export interface FeedUpdate extends BetUpdatePayload {
  player: string;
}

/**
 * A batch of consecutive outbox rows, in seq order. `prevSeq` is the seq the publisher had
 * published up to before this batch: a node whose own position is behind it has missed something
 * and reads the gap from the table. An empty batch is a heartbeat that carries only the position.
 */
export interface FeedMessage {
  prevSeq: string;
  updates: FeedUpdate[];
  /**
   * The W3C trace context of the publisher's span that sent this message (only when it traces and
   * the updates' writer did): a node's delivery continues it. Never forwarded to clients.
   */
  traceparent?: string;
}

export interface InterServerEvents {
  "bets:feed": (message: FeedMessage) => void;
}
