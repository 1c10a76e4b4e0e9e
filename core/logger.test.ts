import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

// Secrets never reach the logs, even when a whole configuration object is logged by mistake.

describe("logger", () => {
  it("redacts the cursor secrets, current and previous, at the top and one level down", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ name: "test", destination });
    const secrets = { CURSOR_SECRET: "current-secret-value", CURSOR_SECRET_PREVIOUS: "previous-secret-value" };
    logger.info({ ...secrets, config: secrets }, "configuration");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("secret-value");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      CURSOR_SECRET: "[redacted]",
      CURSOR_SECRET_PREVIOUS: "[redacted]",
      config: { CURSOR_SECRET_PREVIOUS: "[redacted]" },
    });
  });
});
