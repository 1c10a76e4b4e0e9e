// One server of the peer gateway benchmark (bench/gateways.ts), each in its own process so that
// every gateway has its own event loop and its own CPU account:
//
//   serve-peer.ts subgraphs   the three subgraphs on free loopback ports over BENCH_SERVE_DATABASE_URL;
//                             prints { pid, subgraphs: { name: ".../graphql" } }
//   serve-peer.ts apollo      this project's gateway (createGateway) with the production settings
//                             (error masking, the configured query limits) but no per-client rate
//                             limit (all load comes from one client); prints { pid, url }
//   serve-peer.ts hive        Hive Gateway (@graphql-hive/gateway-runtime) over the same supergraph
//                             file; prints { pid, url }
//
// Both gateways read the committed supergraph.graphql and get the subgraph URLs the `subgraphs`
// child printed (BENCH_SUBGRAPH_URLS, JSON), which replace the supergraph's routing URLs.
//   serve-peer.ts hive-rust   the same Hive Gateway with its Rust query planner (@graphql-hive/router-runtime)
//   serve-peer.ts stack       what `npm start` serves, in one process: the three subgraphs and this
//                             gateway (bench/common.ts startBenchStack: production, no rate limit,
//                             no response cache); prints { pid, url }
//
// BENCH_HIVE_DEDUPE=0 turns off Hive's merging of identical in-flight subgraph requests (on by
// default in Hive). BENCH_RESPONSE_CACHE=1 turns on this gateway's in-process response cache.
// Every role stops on SIGTERM/SIGINT. Logs (warn and above) go to stderr.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { GATEWAY_SECTIONS, gatewaySettings, stopOnSignals } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../core/db.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createGateway } from "../gateway/server.ts";
import { createMemoryResponseCacheStore } from "../gateway/response-cache.ts";
import { loadSubgraphFactories } from "../subgraphs/registry.ts";
import { BENCH_CURSOR_KEY, benchConfig, startBenchStack } from "./common.ts";
import { reportLoopStatsOnSignal } from "./loop-stats.ts";

// Hive's type declarations pull TypeScript's DOM library in (through @whatwg-node/fetch), which
// changes global types for the whole project; so the module is imported by name (no type
// resolution) and the little this script uses is typed here.
const HIVE_RUNTIME = "@graphql-hive/gateway-runtime";
const HIVE_ROUTER_RUNTIME = "@graphql-hive/router-runtime";
interface HiveRuntime {
  (req: IncomingMessage, res: ServerResponse): void;
  [Symbol.asyncDispose](): Promise<void>;
}
interface HiveModule {
  createGatewayRuntime(config: Record<string, unknown>): HiveRuntime;
}
interface HiveRouterModule {
  unifiedGraphHandler: unknown;
}

const role = process.argv[2];
const SUPERGRAPH = fileURLToPath(new URL("../supergraph.graphql", import.meta.url));
const logger = pino({ name: `bench-peer-${role}`, level: benchConfig.BENCH_LOG_LEVEL ?? "warn" }, pino.destination(2));

// bench/gateways.ts --loop-stats: event-loop delay and GC pauses per open-loop run.
reportLoopStatsOnSignal(role ?? "?");

function fail(message: string): never {
  process.stderr.write(`bench/serve-peer.ts: ${message}\n`);
  process.exit(2);
}

function required(name: "BENCH_SERVE_DATABASE_URL" | "BENCH_SUBGRAPH_URLS"): string {
  return benchConfig[name] || fail(`${name} is not set`);
}

function subgraphUrls(): Record<string, string> {
  return JSON.parse(required("BENCH_SUBGRAPH_URLS")) as Record<string, string>;
}

function ready(info: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ pid: process.pid, role, ...info })}\n`);
}

if (role === "subgraphs") {
  const db = await openDatabase({ url: required("BENCH_SERVE_DATABASE_URL"), logger, migrate: false });
  const deps = { db, logger, networks: new NetworkDirectory(db), production: true, cursorKey: BENCH_CURSOR_KEY };
  const subgraphs = (await loadSubgraphFactories()).map((create) => create(deps));
  const urls: Record<string, string> = {};
  for (const subgraph of subgraphs) urls[subgraph.name] = `${(await subgraph.listen("127.0.0.1", 0)).url}/graphql`;
  ready({ subgraphs: urls });
  stopOnSignals(logger, async () => {
    await Promise.all(subgraphs.map((s) => s.stop()));
    await db.close();
  });
} else if (role === "apollo") {
  // The gateway reads the database only for /health; the benchmark never asks for it.
  const db = await openDatabase({ url: required("BENCH_SERVE_DATABASE_URL"), logger, migrate: false });
  // The configured query limits, the production settings, this supergraph file; no per-client rate limit.
  const config = {
    ...loadConfig(GATEWAY_SECTIONS),
    NODE_ENV: "production",
    SUPERGRAPH_PATH: SUPERGRAPH,
    RATE_LIMIT_POINTS: 0,
    RATE_LIMIT_MAX_IN_FLIGHT: 0,
    RESPONSE_CACHE: false,
  } as const;
  const gateway = createGateway({
    db,
    logger,
    ...gatewaySettings(config, { logger }),
    subgraphUrls: subgraphUrls(),
    ...(benchConfig.BENCH_RESPONSE_CACHE ? { responseCache: createMemoryResponseCacheStore({ maxEntries: 10_000, maxBytes: 256 * 1024 * 1024 }) } : {}),
  });
  const http = await gateway.listen("127.0.0.1", 0);
  ready({ url: `${http.url}/graphql` });
  stopOnSignals(logger, async () => {
    await gateway.stop();
    await db.close();
  });
} else if (role === "stack") {
  const db = await openDatabase({ url: required("BENCH_SERVE_DATABASE_URL"), logger, migrate: false });
  const stack = await startBenchStack(db, logger);
  ready({ url: `${stack.url}/graphql` });
  stopOnSignals(logger, async () => {
    await stack.stop();
    await db.close();
  });
} else if (role === "hive" || role === "hive-rust") {
  const { createGatewayRuntime } = (await import(HIVE_RUNTIME)) as HiveModule;
  // The Rust planner replaces the JS one through the runtime's unified-graph seam; all else is equal.
  const planner = role === "hive-rust" ? { unifiedGraphHandler: ((await import(HIVE_ROUTER_RUNTIME)) as HiveRouterModule).unifiedGraphHandler } : {};
  const dedupe = benchConfig.BENCH_HIVE_DEDUPE;
  const locations = Object.fromEntries(Object.entries(subgraphUrls()).map(([name, location]) => [name, { location }]));
  const runtime = createGatewayRuntime({
    supergraph: SUPERGRAPH,
    transportEntries: { ...locations, "*.http": { options: { deduplicateInflightRequests: dedupe } } },
    graphqlEndpoint: "/graphql",
    graphiql: false,
    landingPage: false,
    logging: "warn",
    // Production defaults: masked errors, no introspection gate (ours allows it too).
    maskedErrors: true,
    ...planner,
  });
  const server = createServer(runtime);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, dedupe });
  stopOnSignals(logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await runtime[Symbol.asyncDispose]();
  });
} else {
  fail(`usage: serve-peer.ts subgraphs|apollo|stack|hive|hive-rust (got ${role ?? "nothing"})`);
}
