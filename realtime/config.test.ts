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
    });
    expect(loadRealtimeConfig({ REALTIME_PUBLISHER: "1", REALTIME_PATH: "/ws" })).toMatchObject({ REALTIME_PUBLISHER: true, REALTIME_PATH: "/ws" });
    const invalid = () => loadRealtimeConfig({ REALTIME_EVENTS_PER_SECOND: "0", REALTIME_PATH: "ws" });
    expect(invalid).toThrow(/REALTIME_EVENTS_PER_SECOND/);
    expect(invalid).toThrow(/REALTIME_PATH/);
  });
});
