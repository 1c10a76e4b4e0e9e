import { z } from "zod";
import { variable, positiveInt, nonNegativeInt, bufferedBytes, flag, type Variable } from "./config-types.ts";

// The realtime nodes' and the publisher's variables, a section of core/config-variables.ts kept in its own
// file for its size; the order here is the order of the generated docs.

export const REALTIME_VARIABLES = {
  REALTIME_PATH: variable(
    "realtime",
    z.string().regex(/^\/[A-Za-z0-9._~/-]*$/, "must be a URL path"),
    "/ws",
    "Socket.IO path of a dedicated node (the API host always uses `/socket.io`)",
  ),
  REALTIME_REDIS_PREFIX: variable("realtime", z.string().min(1), "bets:", "prefix of the Redis channels (`<prefix>socket.io…`); one per deployment"),
  REALTIME_PUBLISHER: variable("realtime", flag, "0", "`1`: a node also runs a publisher (one of all publishers is active)"),
  REALTIME_TRANSPORTS: variable(
    "realtime",
    z.enum(["polling,websocket", "websocket"]),
    "polling,websocket",
    "`websocket`: refuse long-polling (load balancers without sticky sessions)",
  ),
  REALTIME_MAX_SUBSCRIPTIONS: variable("realtime", positiveInt, "200", "wallets + bets one socket may follow"),
  REALTIME_MAX_CHAIN_IDS: variable("realtime", positiveInt, "32", "chain ids in one subscription"),
  REALTIME_EVENTS_PER_SECOND: variable("realtime", positiveInt, "20", "client events per second per socket"),
  REALTIME_MAX_MESSAGE_BYTES: variable("realtime", positiveInt, "16384", "largest client message in bytes"),
  REALTIME_MAX_BUFFERED_BYTES: variable(
    "realtime",
    bufferedBytes,
    "4194304",
    "bytes queued for a socket that does not read before its connection is closed (`0`: no bound, else ≥ 65536)",
  ),
  REALTIME_MAX_SOCKETS_PER_ADDRESS: variable(
    "realtime",
    nonNegativeInt,
    "20",
    "sockets one client address may hold on a node (`TOO_MANY_CONNECTIONS` at the handshake beyond; `0`: no bound)",
  ),
  REALTIME_MAX_SOCKETS_PER_ADDRESS_CLUSTER: variable(
    "realtime",
    nonNegativeInt,
    "40",
    "with `REDIS_URL`: sockets one client address may hold across the nodes, counted in Redis (while Redis is away, each node's own bound still holds; `0`: no bound)",
  ),
  REALTIME_MAX_SOCKETS: variable("realtime", nonNegativeInt, "10000", "sockets a node holds at most (`NODE_FULL` at the handshake beyond; `0`: no bound)"),
  REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS: variable(
    "realtime",
    nonNegativeInt,
    "256",
    "firehose subscriptions (`{ all }` or `chainIds` alone: one delivery per update each) a node serves at most beyond each client address's first (a first one is bounded only by the node's socket cap); beyond, such a subscribe is refused `SERVICE_UNAVAILABLE` with `retryAfterSeconds` (`0`: no bound)",
  ),
  REALTIME_MAX_FIREHOSE_PER_ADDRESS: variable(
    "realtime",
    nonNegativeInt,
    "8",
    "firehose subscriptions one client address holds at most on a node; beyond, `RATE_LIMITED` with `retryAfterSeconds` (`0`: no bound)",
  ),
  REALTIME_MAX_MEMORY_MB: variable(
    "realtime",
    nonNegativeInt,
    "768",
    "a realtime node refuses new sockets (`NODE_FULL`) while its resident memory (RSS) is above this many MiB (`0`: no bound; not applied by `npm start`, whose one process holds everything)",
  ),
  REALTIME_REPLAY_MAX_UPDATES: variable("realtime", nonNegativeInt, "100000", "replay window for `sinceSeq`, in updates (`REPLAY_WINDOW_EXCEEDED` beyond)"),
  REALTIME_REPLAY_MAX_AGE_SECONDS: variable("realtime", nonNegativeInt, "86400", "replay window for `sinceSeq`, in seconds"),
  REALTIME_REPLAY_DRAIN_TIMEOUT_MS: variable(
    "realtime",
    positiveInt,
    "10000",
    "a replay waits this long for a socket that stopped reading (more than 256 KiB queued) before it closes the connection",
  ),
  REALTIME_REPLAY_PAGE_POINTS: variable(
    "realtime",
    nonNegativeInt,
    "100",
    "cost points a replay page (100 stored updates) takes from the client address's budget (`RATE_LIMIT_POINTS`, shared with its GraphQL requests; `RATE_LIMITED` once spent; `0`: replays not charged); see docs/reference/limits.md for how it compares with the page's CPU",
  ),
  REALTIME_REPLAY_PREPAID_PAGES: variable(
    "realtime",
    positiveInt.max(1000),
    "10",
    "pages a `sinceSeq` replay pays for before its first read: the pages between `sinceSeq` and the newest update, at most this many (later pages one by one; at most `RATE_LIMIT_POINTS` in all); a completed replay gets back those it did not read, one its client leaves does not, so a reconnect loop pays for each deep replay it restarts",
  ),
  REALTIME_REPLAY_LANE_CONCURRENCY: variable(
    "realtime",
    positiveInt.max(1000),
    "4",
    "replay page reads (`sinceSeq`) running at once per realtime node, i.e. pool connections replays may hold; keep it below `DATABASE_POOL_SIZE` (docs/guides/operating.md)",
  ),
  REALTIME_REPLAY_LANE_PER_CLIENT: variable(
    "realtime",
    positiveInt.max(1000),
    "1",
    "replay page reads one client address runs at once on a node (8 more may wait; beyond, `SERVICE_UNAVAILABLE` with `retryAfterSeconds`)",
  ),
  REALTIME_REPLAY_LANE_QUEUE_TIMEOUT_MS: variable(
    "realtime",
    positiveInt,
    "5000",
    "how long a replay page read may wait for its turn in the replay lane before the replay is refused `SERVICE_UNAVAILABLE` with `retryAfterSeconds`",
  ),
  REALTIME_PING_INTERVAL_MS: variable(
    "realtime",
    positiveInt,
    "25000",
    "Socket.IO heartbeat interval (proxies must allow idle connections longer than interval + timeout)",
  ),
  REALTIME_PING_TIMEOUT_MS: variable("realtime", positiveInt, "20000", "Socket.IO heartbeat timeout"),
  REALTIME_POLL_INTERVAL_MS: variable(
    "realtime",
    positiveInt,
    "1000",
    "the publisher's safety-net poll of the outbox; a node's own poll while its feed is down",
  ),
  REALTIME_FEED_TIMEOUT_MS: variable(
    "realtime",
    nonNegativeInt,
    "5000",
    "a node delivers from the outbox itself after this long without a feed message (`0`: only while Redis is down)",
  ),
  REALTIME_DRAIN_GRACE_MS: variable("realtime", nonNegativeInt, "10000", "SIGTERM: the most a node waits for its sockets to reconnect elsewhere"),

  // ------------------------------------------------------------------------------- publisher
  REALTIME_PRUNE_INTERVAL_MS: variable(
    "publisher",
    nonNegativeInt,
    "60000",
    "how often the active publisher deletes outbox rows beyond the replay window (`0`: never)",
  ),
  REALTIME_PRUNE_BATCH_SIZE: variable("publisher", positiveInt.max(100_000), "1000", "outbox rows per pruning DELETE"),
} satisfies Record<string, Variable>;
