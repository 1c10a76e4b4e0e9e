import { describe, expect, it } from "vitest";
import { loadRealtimeConfig } from "./config.ts";

describe("realtime configuration", () => {
  it("parses REALTIME_* once, with the contract's defaults, and rejects nonsense", () => {
    const config = loadRealtimeConfig({});
    expect(config).toMatchObject({
      REALTIME_MAX_SUBSCRIPTIONS: 200,
      REALTIME_EVENTS_PER_SECOND: 20,
      REALTIME_MAX_MESSAGE_BYTES: 16384,
      REALTIME_PUBLISHER: false,
      REALTIME_TRANSPORTS: "polling,websocket",
      REALTIME_FEED_TIMEOUT_MS: 5000,
      REALTIME_DRAIN_GRACE_MS: 10000,
    });
    expect(config.METRICS_PORT).toBeUndefined();
    const blank = loadRealtimeConfig({ METRICS_PORT: "", REALTIME_FEED_TIMEOUT_MS: "0" });
    expect(blank.METRICS_PORT).toBeUndefined();
    expect(blank.REALTIME_FEED_TIMEOUT_MS).toBe(0);
    expect(loadRealtimeConfig({ METRICS_PORT: "9465" }).METRICS_PORT).toBe(9465);
    expect(() => loadRealtimeConfig({ METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
    expect(() => loadRealtimeConfig({ REALTIME_DRAIN_GRACE_MS: "-1" })).toThrow(/REALTIME_DRAIN_GRACE_MS/);
    expect(config.REALTIME_MAX_BUFFERED_BYTES).toBe(4 * 1024 * 1024);
    expect(config).toMatchObject({ REALTIME_PRUNE_INTERVAL_MS: 60_000, REALTIME_PRUNE_BATCH_SIZE: 1_000 });
    expect(loadRealtimeConfig({ REALTIME_PRUNE_INTERVAL_MS: "0" }).REALTIME_PRUNE_INTERVAL_MS).toBe(0);
    expect(() => loadRealtimeConfig({ REALTIME_PRUNE_BATCH_SIZE: "0" })).toThrow(/REALTIME_PRUNE_BATCH_SIZE/);
    expect(loadRealtimeConfig({ REALTIME_MAX_BUFFERED_BYTES: "0" }).REALTIME_MAX_BUFFERED_BYTES).toBe(0);
    expect(() => loadRealtimeConfig({ REALTIME_MAX_BUFFERED_BYTES: "1024" })).toThrow(/REALTIME_MAX_BUFFERED_BYTES/);
    expect(loadRealtimeConfig({ REALTIME_PUBLISHER: "1", REALTIME_PATH: "/ws" })).toMatchObject({ REALTIME_PUBLISHER: true, REALTIME_PATH: "/ws" });
    const invalid = () => loadRealtimeConfig({ REALTIME_EVENTS_PER_SECOND: "0", REALTIME_PATH: "ws" });
    expect(invalid).toThrow(/REALTIME_EVENTS_PER_SECOND/);
    expect(invalid).toThrow(/REALTIME_PATH/);
  });
});
