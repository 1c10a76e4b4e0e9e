import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { binaryService, redisService, serviceTitle, skipWithout } from "./services.ts";

// The rule of tests needing Redis, nginx or Chromium: skipped with SKIPPED and the install command
// in their title where the service is missing, never under CI.

const ci = process.env.CI;
afterEach(() => {
  if (ci === undefined) delete process.env.CI;
  else process.env.CI = ci;
});

describe("service-gated suites", () => {
  it("a missing Redis is detected quickly and titled SKIPPED with the install command", async () => {
    delete process.env.CI;
    const started = Date.now();
    const redis = await redisService("redis://127.0.0.1:1");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(redis.missing).toMatch(/no Redis at 127\.0\.0\.1:1/);
    expect(skipWithout(redis)).toBe(true);
    expect(serviceTitle("rate limit in Redis", redis)).toBe("rate limit in Redis — SKIPPED: no Redis at 127.0.0.1:1 (apt-get install -y redis-server)");
  });

  it("a port that answers but is not Redis counts as missing", async () => {
    const server = createServer((socket) => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      expect((await redisService(`redis://127.0.0.1:${port}`)).missing).toBeDefined();
    } finally {
      server.close();
    }
  });

  it("under CI nothing is skipped and the title stays plain", () => {
    process.env.CI = "true";
    const nginx = binaryService("/nonexistent/nginx", "apt-get install -y nginx-light");
    expect(nginx.missing).toBe("/nonexistent/nginx is absent");
    expect(skipWithout(nginx)).toBe(false);
    expect(serviceTitle("nginx in front", nginx)).toBe("nginx in front");
  });

  it("a present service changes nothing", () => {
    delete process.env.CI;
    const node = binaryService(process.execPath, "-");
    expect(skipWithout(node)).toBe(false);
    expect(serviceTitle("t", node)).toBe("t");
  });
});
