// Prometheus metrics of the realtime tier (GET /metrics): a dedicated node serves them on its own
// port beside /health, the publisher process on HOST:METRICS_PORT. Values are read from the live
// objects at scrape time (prom-client `collect`), so nothing on the delivery path pays for them.
import { Counter, Gauge, type Registry } from "prom-client";
import { metricsRoute, registryFor } from "../core/metrics.ts";
import type { RouteHandler } from "../core/http.ts";
import type { RefusalReason } from "./admission.ts";
import type { Fanout } from "./fanout.ts";
import type { Outbox } from "../core/outbox.ts";
import type { Publisher } from "./publisher.ts";
import type { Realtime } from "./server.ts";

export interface RealtimeMetrics {
  registry: Registry;
  route: RouteHandler;
}

/** A counter that mirrors a monotonic number kept elsewhere. */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}

function gauge(registry: Registry, name: string, help: string, read: () => number | Promise<number>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}

export function createNodeMetrics(
  realtime: Pick<
    Realtime,
    | "state"
    | "delivered"
    | "healed"
    | "subscriptions"
    | "lastSeq"
    | "slowConsumerDisconnects"
    | "admission"
    | "firehose"
    | "replayStalls"
    | "replayRefusals"
    | "replayLane"
  >,
  fanout: Pick<Fanout, "kind" | "connected">,
  options: { defaultMetrics?: boolean } = {},
): RealtimeMetrics {
  const registry = registryFor("realtime", options.defaultMetrics ?? true);
  gauge(registry, "realtime_connected_sockets", "Socket.IO connections on this node", () => realtime.state().sockets);
  gauge(registry, "realtime_subscriptions", "Subscription items (wallets + bets + chainIds, 1 for all) over this node's sockets", () =>
    realtime.subscriptions(),
  );
  mirroredCounter(registry, "realtime_updates_delivered_total", "Updates this node emitted to its rooms (once each, whatever the number of sockets)", () =>
    realtime.delivered(),
  );
  mirroredCounter(
    registry,
    "realtime_updates_from_outbox_total",
    "Of those, updates read from the outbox (gaps, local delivery) rather than brought by the feed",
    () => realtime.healed(),
  );
  mirroredCounter(
    registry,
    "realtime_slow_consumer_disconnects_total",
    "Connections closed because their socket had more than REALTIME_MAX_BUFFERED_BYTES queued (it did not read)",
    () => realtime.slowConsumerDisconnects(),
  );
  mirroredCounter(
    registry,
    "realtime_replay_stalled_disconnects_total",
    "Connections closed because they stopped reading their replay for REALTIME_REPLAY_DRAIN_TIMEOUT_MS",
    () => realtime.replayStalls(),
  );
  mirroredCounter(registry, "realtime_replay_refusals_total", "Replays refused or cut short RATE_LIMITED: the client address's replay budget was spent", () =>
    realtime.replayRefusals(),
  );
  // The replay lane, named like the subgraphs' expensive lane (subgraphs/kit/lane-metrics.ts); 0 without one.
  gauge(registry, "realtime_replay_lane_running", "Replay page reads running now in this node's replay lane", () => realtime.replayLane()?.running ?? 0);
  gauge(registry, "realtime_replay_lane_waiting", "Replay page reads waiting for the replay lane", () => realtime.replayLane()?.waiting ?? 0);
  mirroredCounter(
    registry,
    "realtime_replay_lane_refused_total",
    "Replays refused or cut short SERVICE_UNAVAILABLE by the replay lane (queue deadline passed, or the address's share of the queue full)",
    () => realtime.replayLane()?.refused ?? 0,
  );
  admissionRefusals(registry, () => realtime.admission().refusals);
  gauge(
    registry,
    "realtime_firehose_subscriptions",
    "Firehose subscriptions ({ all } or chainIds alone) on this node, each one delivery per update",
    () => realtime.firehose().subscriptions,
  );
  labelledCounter(
    registry,
    "realtime_firehose_refusals_total",
    "Firehose subscribes refused: reason node (REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS, SERVICE_UNAVAILABLE) or address (REALTIME_MAX_FIREHOSE_PER_ADDRESS, RATE_LIMITED)",
    () => realtime.firehose().refusals,
  );
  gauge(registry, "realtime_last_seq", "The newest seq this node has delivered", () => Number(realtime.lastSeq()));
  gauge(registry, "realtime_local_delivery", "1 while this node delivers from the outbox itself (feed or Redis down), else 0", () =>
    realtime.state().delivery === "local" ? 1 : 0,
  );
  gauge(registry, "realtime_redis_connected", "1 while the Redis adapter's connections are up (always 1 in memory)", () => (fanout.connected() ? 1 : 0));
  return { registry, route: metricsRoute(registry) };
}

/** Refused handshakes by reason. */
function admissionRefusals(registry: Registry, read: () => Record<RefusalReason, number>): void {
  labelledCounter(
    registry,
    "realtime_admission_refusals_total",
    "Handshakes refused by admission: reason memory, node or node_connections (NODE_FULL), address, address_cluster or address_connections (TOO_MANY_CONNECTIONS)",
    read,
  );
}

/** A counter by `reason` mirroring counts kept elsewhere (labels fixed up front, so every series exists from 0). */
function labelledCounter(registry: Registry, name: string, help: string, read: () => Readonly<Record<string, number>>): void {
  const reported: Record<string, number> = {};
  new Counter({
    name,
    help,
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      for (const [reason, now] of Object.entries(read())) {
        if (reported[reason] === undefined) this.inc({ reason }, 0);
        if (now > (reported[reason] ?? 0)) this.inc({ reason }, now - (reported[reason] ?? 0));
        reported[reason] = now;
      }
    },
  });
}

export function createPublisherMetrics(
  publisher: Pick<Publisher, "isActive" | "publishedSeq" | "messages" | "pruned">,
  fanout: Pick<Fanout, "connected">,
  outbox: Pick<Outbox, "head">,
  options: { defaultMetrics?: boolean } = {},
): RealtimeMetrics {
  const registry = registryFor("publisher", options.defaultMetrics ?? true);
  gauge(registry, "publisher_active", "1 while this process holds the publisher lock and publishes", () => (publisher.isActive() ? 1 : 0));
  gauge(registry, "publisher_published_seq", "The newest seq this process has published", () => Number(publisher.publishedSeq()));
  // Only the active publisher has a lag; a standby reports 0 (publisher_active says which is which).
  gauge(registry, "publisher_lag_updates", "Newest outbox seq minus the newest published seq (active publisher)", async () =>
    publisher.isActive() ? Math.max(0, Number((await outbox.head()) - publisher.publishedSeq())) : 0,
  );
  mirroredCounter(registry, "publisher_messages_sent_total", "Feed messages (batches and heartbeats) sent to the nodes", () => publisher.messages().sent);
  mirroredCounter(
    registry,
    "publisher_messages_dropped_total",
    "Feed messages dropped while Redis was down (the nodes read those rows themselves)",
    () => publisher.messages().dropped,
  );
  mirroredCounter(registry, "publisher_outbox_rows_pruned_total", "Outbox rows deleted beyond the replay window by this process while active", () =>
    publisher.pruned(),
  );
  gauge(registry, "publisher_redis_connected", "1 while the fan-out's Redis connections are up", () => (fanout.connected() ? 1 : 0));
  return { registry, route: metricsRoute(registry) };
}
