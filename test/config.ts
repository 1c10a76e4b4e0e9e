import { REALTIME_SECTIONS, realtimeSettings } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import type { RealtimeSettings } from "../realtime/runtime.ts";

/** The test suite's variables (TEST_DB, TEST_DATABASE_URL, TEST_REDIS_URL, TEST_LOG_LEVEL), parsed once per test file. */
export const testConfig = loadConfig(["test"]);

/**
 * A realtime node's settings as every process maps them (bin/wiring.ts), from these REALTIME_* variables over the defaults;
 * without a memory budget unless given (the test runner's RSS is not a node's).
 */
export function testRealtimeSettings(env: Record<string, string> = {}, overrides: Partial<RealtimeSettings> = {}): RealtimeSettings {
  return { ...realtimeSettings(loadConfig(["shared", ...REALTIME_SECTIONS], { REALTIME_MAX_MEMORY_MB: "0", ...env })), ...overrides };
}
