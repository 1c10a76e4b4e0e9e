import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { testGatewaySettings } from "../test/stack.ts";

// A stack whose PostgreSQL and Redis cannot be reached (nothing listens on their ports):
// queries answer SERVICE_UNAVAILABLE with no internals, /health is DOWN with HTTP 503.

let db: Database;
let redis: Redis;
let stack: RunningStack;
beforeAll(async () => {
  db = await openDatabase({ url: "postgresql://postgres@127.0.0.1:9/unreachable" });
  redis = new Redis({ host: "127.0.0.1", port: 9, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  redis.on("error", () => undefined); // expected: nothing listens there
  stack = await startStack({
    deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({ production: true, redis }),
  });
});
afterAll(async () => {
  await stack?.stop();
  redis?.disconnect();
  await db?.close();
});

describe("dependencies down", () => {
  it("answers SERVICE_UNAVAILABLE without hosts, ports or driver messages", async () => {
    const response = await fetch(`${stack.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ networkConfigs { name } }` }),
    });
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe("SERVICE_UNAVAILABLE");
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:9\b|postgres|prisma|stack/i);
  });

  it("reports DOWN with HTTP 503, naming the database and Redis checks", async () => {
    const response = await fetch(`${stack.url}/health`);
    expect(response.status).toBe(503);
    const report = (await response.json()) as { status: string; checks: { name: string; status: string; detail: string | null }[] };
    expect(report.status).toBe("DOWN");
    expect(report.checks.find((c) => c.name === "database")).toMatchObject({ status: "DOWN", detail: "unreachable" });
    expect(report.checks.find((c) => c.name === "redis")).toMatchObject({ status: "DEGRADED" });
    expect(JSON.stringify(report)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgresql:/);
  });
});
