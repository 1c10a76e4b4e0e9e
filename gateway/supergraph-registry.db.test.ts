import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { SUBGRAPHS } from "../subgraphs/registry.ts";
import { eventually } from "../test/eventually.ts";
import { capturingLogger, composeWith, historyWithoutPendingBetCount, startTestRegistry, type TestRegistry } from "../test/registry.ts";
import { startTestStack, testGatewaySettings, type TestStack } from "../test/stack.ts";
import { createMemoryResponseCacheStore } from "./response-cache.ts";
import { createGateway } from "./server.ts";
import { sha256Hex, type SupergraphRegistrySettings } from "./supergraph-source.ts";

// The gateway following a schema registry (SUPERGRAPH_URL, gateway/supergraph-source.ts) served by
// a local HTTP server: a good supergraph is served from the first poll after it is published, a
// broken one never, a gateway starts from its kept copy while the registry is down and refuses to
// start with neither. "Within one poll" is counted in polls, not time: polls run one after the
// other, so once the registry has answered the poll after the one that carried a new supergraph,
// that one has been applied or refused.

const COMMITTED = readFileSync("supergraph.graphql", "utf8");
const PENDING = `{ pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`;
const historyWithoutCount = historyWithoutPendingBetCount();
/** A good new version: the committed subgraphs but history's `pendingBetCount` removed. */
const WITHOUT_COUNT = composeWith({ replace: { history: historyWithoutCount } });

let t: TestStack;
let dir: string;
beforeAll(async () => {
  expect(historyWithoutCount).not.toContain("pendingBetCount");
  dir = mkdtempSync(join(tmpdir(), "registry-"));
  t = await startTestStack({ bets: 40 });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const POLL_MS = 150;
const settingsFor = (registry: TestRegistry, keptPath: string): SupergraphRegistrySettings => ({
  url: registry.url,
  key: { header: "X-Registry-Key", value: "test-key-never-logged" },
  pollIntervalMs: POLL_MS,
  keptPath,
});

/** A stack over the test database whose gateway follows `registry` (its own subgraphs, in process). */
function followingStack(registry: TestRegistry, keptPath: string, logger: Logger, cache = false): Promise<RunningStack> {
  return startStack({
    deps: { db: t.db, logger, networks: new NetworkDirectory(t.db), production: false },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({
      supergraphRegistry: settingsFor(registry, keptPath),
      ...(cache ? { responseCache: createMemoryResponseCacheStore({ maxEntries: 100, maxBytes: 1 << 20 }), responseCacheGenerationPollMs: 100 } : {}),
    }),
  });
}

/** Resolves once the registry has answered the poll after the next one: the next one's supergraph is then applied or refused. */
async function afterNextPoll(registry: TestRegistry): Promise<void> {
  const seen = registry.polls();
  await eventually(() => registry.polls() >= seen + 2, 20_000, "two more polls");
}

async function gql(stack: RunningStack, query: string): Promise<{ data?: unknown; errors?: { extensions?: { code?: string } }[]; cache: string | null }> {
  const response = await fetch(`${stack.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return { ...((await response.json()) as object), cache: response.headers.get("x-cache") };
}

type Check = { name: string; status: string; latencyMs: number | null; detail: string };

/** The `supergraph` check of /health once its detail matches (a report is reused for a second). */
async function supergraphCheck(stack: RunningStack, detail: RegExp): Promise<Check> {
  let check: Check | undefined;
  const read = async () => {
    const report = (await (await fetch(`${stack.url}/health`)).json()) as { checks: Check[] };
    check = report.checks.find((c) => c.name === "supergraph");
    return detail.test(check?.detail ?? "");
  };
  await eventually(read, 10_000, () => `a supergraph check matching ${detail}, last ${JSON.stringify(check)}`);
  return check!;
}
const escaped = (text: string) => text.replace(/[()]/g, "\\$&");

const messages = (lines: Record<string, unknown>[]) => lines.filter((l) => String(l.msg).includes("supergraph")).map((l) => l.msg);
/** The gateway's supergraph log lines as written (printed: the issue note quotes them). */
const logLines = (lines: Record<string, unknown>[]) =>
  lines
    .filter((l) => String(l.msg).includes("supergraph"))
    .map(({ level, msg, hash, previous, serving, origin, problem, path }) => JSON.stringify({ level, msg, hash, previous, serving, origin, problem, path }))
    .join("\n");

describe("a gateway following a registry", () => {
  it("serves a good update from the first poll after it is published, everywhere at once, and keeps a copy", async () => {
    const registry = await startTestRegistry(COMMITTED);
    const kept = join(dir, "good", "supergraph.graphql");
    const { logger, lines } = capturingLogger();
    const stack = await followingStack(registry, kept, logger, true);
    try {
      expect((await gql(stack, PENDING)).data).toEqual({ pendingBetCount: 0 });
      expect(readFileSync(kept, "utf8")).toBe(COMMITTED);
      expect(await supergraphCheck(stack, new RegExp(`^${sha256Hex(COMMITTED)}`))).toMatchObject({
        status: "OK",
        detail: `${sha256Hex(COMMITTED)} (registry)`,
      });
      // A cached answer (network settings, kept a minute) under the first version.
      const networks = "{ networkConfigs { chainId name } }";
      await gql(stack, networks);
      await eventually(async () => (await gql(stack, networks)).cache === "HIT", 10_000, "a cache hit");

      await afterNextPoll(registry);
      expect(registry.lastHeaders()?.["if-none-match"]).toBe(`"${sha256Hex(COMMITTED)}"`);
      expect(registry.lastHeaders()?.["x-registry-key"]).toBe("test-key-never-logged");
      expect(registry.statuses().at(-1)).toBe(304);

      registry.publish(WITHOUT_COUNT);
      await afterNextPoll(registry);
      const hash = sha256Hex(WITHOUT_COUNT);
      // Routing and validation (the query plan's schema), the served SDL, health, metrics, the kept copy.
      expect((await gql(stack, PENDING)).errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
      const sdl = await fetch(`${stack.url}/schema.graphql`);
      expect(sdl.headers.get("etag")).toBe(`"${hash}"`);
      expect(await sdl.text()).not.toContain("pendingBetCount");
      expect(await supergraphCheck(stack, new RegExp(`^${hash}`))).toMatchObject({ status: "OK", detail: `${hash} (registry)` });
      expect(await (await fetch(`${stack.url}/metrics`)).text()).toContain(`gateway_supergraph_info{hash="${hash}",origin="registry",service="gateway"} 1`);
      expect(readFileSync(kept, "utf8")).toBe(WITHOUT_COUNT);
      // The cache key names the schema: the answer cached under the old version is not replayed.
      expect((await gql(stack, networks)).cache).toBe("MISS");
      expect(JSON.stringify(lines())).not.toContain("test-key-never-logged");
      console.info(logLines(lines()));
    } finally {
      await stack.stop();
      await registry.close();
    }
  });

  it("refuses a broken supergraph, or one lacking a subgraph it routes to, and keeps serving the last good one", async () => {
    const registry = await startTestRegistry(COMMITTED);
    const kept = join(dir, "broken", "supergraph.graphql");
    const { logger, lines } = capturingLogger();
    const stack = await followingStack(registry, kept, logger);
    try {
      for (const [what, broken] of [
        ["not a supergraph", "type Query { oops"],
        ["without the results subgraph", composeWith({ omit: ["results"] })],
        ["empty", ""],
      ] as const) {
        registry.publish(broken);
        await afterNextPoll(registry);
        expect((await gql(stack, PENDING)).data, what).toEqual({ pendingBetCount: 0 });
        const refused = new RegExp(`^${sha256Hex(COMMITTED)} \\(registry\\); registry: refused ${sha256Hex(broken).slice(0, 12)} \\(see the log\\) for \\d+s$`);
        expect(await supergraphCheck(stack, refused), what).toEqual({
          name: "supergraph",
          status: "DEGRADED",
          latencyMs: null,
          detail: expect.stringMatching(refused),
        });
        expect(readFileSync(kept, "utf8"), what).toBe(COMMITTED);
      }
      registry.down();
      await afterNextPoll(registry);
      expect((await gql(stack, PENDING)).data).toEqual({ pendingBetCount: 0 });
      expect(await supergraphCheck(stack, /registry: HTTP 503 for \d+s$/)).toMatchObject({ status: "DEGRADED" });
      registry.up();
      registry.publish(COMMITTED);
      await afterNextPoll(registry);
      expect(await supergraphCheck(stack, new RegExp(`^${escaped(`${sha256Hex(COMMITTED)} (registry)`)}$`))).toMatchObject({ status: "OK" });
      const metrics = await (await fetch(`${stack.url}/metrics`)).text();
      expect(metrics).toMatch(/gateway_supergraph_polls_total\{result="refused",service="gateway"\} 3/);
      expect(metrics).toMatch(/gateway_supergraph_polls_total\{result="failed",service="gateway"\} [1-9]/);
      const logged = messages(lines());
      expect(logged).toEqual(expect.arrayContaining([expect.stringMatching(/^supergraph refused: it does not parse as a supergraph/)]));
      expect(logged).toEqual(
        expect.arrayContaining([
          "supergraph refused: it lacks subgraph results that this gateway routes to; keeping the served one",
          "supergraph refused: it is empty; keeping the served one",
        ]),
      );
      console.info(logLines(lines()));
    } finally {
      await stack.stop();
      await registry.close();
    }
  });

  it("starts from the kept copy while the registry is down, then follows it when it is back", async () => {
    const registry = await startTestRegistry(COMMITTED);
    registry.down();
    const kept = join(dir, "kept", "supergraph.graphql");
    // The copy a previous run kept (the registry's last good supergraph then).
    mkdirSync(join(dir, "kept"), { recursive: true });
    writeFileSync(kept, WITHOUT_COUNT);
    const { logger, lines } = capturingLogger();
    const stack = await followingStack(registry, kept, logger);
    try {
      expect((await gql(stack, PENDING)).errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
      expect((await gql(stack, "{ networkConfigs { chainId } }")).data).toBeTruthy();
      expect(await supergraphCheck(stack, new RegExp(`^${sha256Hex(WITHOUT_COUNT)} \\(kept copy\\); registry: HTTP 503`))).toMatchObject({
        status: "DEGRADED",
      });
      registry.up();
      await afterNextPoll(registry);
      expect((await gql(stack, PENDING)).data).toEqual({ pendingBetCount: 0 });
      expect(await supergraphCheck(stack, new RegExp(`^${escaped(`${sha256Hex(COMMITTED)} (registry)`)}$`))).toMatchObject({ status: "OK" });
      expect(readFileSync(kept, "utf8")).toBe(COMMITTED);
      console.info(logLines(lines()));
    } finally {
      await stack.stop();
      await registry.close();
    }
  });

  it("refuses to start with neither the registry nor a kept copy", async () => {
    const registry = await startTestRegistry(COMMITTED);
    await registry.close();
    const kept = join(dir, "none", "supergraph.graphql");
    const { logger, lines } = capturingLogger();
    const gateway = createGateway({
      ...testGatewaySettings({ supergraphRegistry: settingsFor(registry, kept) }),
      db: t.db,
      logger,
      routedSubgraphs: SUBGRAPHS.map((s) => s.name),
    });
    await expect(gateway.listen("127.0.0.1", 0)).rejects.toThrow(
      /^No supergraph to serve: the registry at http:\/\/127\.0\.0\.1:\d+\/artifacts\/v1\/supergraph gave none \(unreachable\)/,
    );
    await gateway.stop().catch(() => undefined);
    expect(existsSync(kept)).toBe(false);
    console.info(logLines(lines()));
  });
});
