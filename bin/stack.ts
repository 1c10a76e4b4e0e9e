import type { RunningHttpServer } from "../core/http.ts";
import { createGateway, type Gateway, type GatewayDeps } from "../gateway/server.ts";
import type { SubgraphDeps } from "../subgraphs/kit/deps.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { loadSubgraphFactories } from "../subgraphs/registry.ts";

export interface StackOptions {
  /** What the subgraphs are built from; the gateway shares their database and logger. */
  deps: SubgraphDeps;
  host: string;
  port: number;
  /** The gateway's settings (bin/wiring.ts gatewaySettings) and extra routes; the stack routes to its own subgraphs. */
  gateway: Omit<GatewayDeps, "db" | "logger" | "subgraphUrls" | "inProcessSubgraphs">;
  /**
   * How the gateway reaches the stack's subgraphs: called in process (default; no loopback HTTP
   * hop, no JSON round trip), or over HTTP on their loopback ports as separate processes are.
   */
  subgraphTransport?: "in-process" | "http";
}

export interface RunningStack {
  gateway: Gateway;
  url: string;
  http: RunningHttpServer;
  subgraphUrls: Record<string, string>;
  /** Each subgraph by name, so a test can stop one and watch the gateway degrade. */
  subgraphs: Record<string, { stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/**
 * Every subgraph of the registry and the gateway in one process, subgraphs on free loopback ports
 * and called by the gateway in process: the embedded default of `npm start`, and what the tests and
 * benchmarks run against. Production runs each as its own process (bin/subgraph.ts, bin/gateway.ts),
 * over HTTP.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const subgraphs = (await loadSubgraphFactories()).map((create) => create(options.deps));
  const subgraphUrls: Record<string, string> = {};
  for (const subgraph of subgraphs) {
    const running = await subgraph.listen("127.0.0.1", 0);
    subgraphUrls[subgraph.name] = `${running.url}/graphql`;
  }
  const { db } = options.deps;
  // The CSV export reads the history subgraph's data directly, page by page (gateway/csv-export.ts).
  const walletBetPages = options.gateway.walletBetPages ?? ((query: Parameters<typeof walletBetsPage>[1]) => walletBetsPage(db, query));
  // The subgraphs listen on loopback either way: /health probes them, and operators may query one directly.
  const inProcessSubgraphs = options.subgraphTransport === "http" ? undefined : Object.fromEntries(subgraphs.map((s) => [s.name, s]));
  const gateway = createGateway({ ...options.gateway, walletBetPages, db, logger: options.deps.logger, subgraphUrls, inProcessSubgraphs });
  const http = await gateway.listen(options.host, options.port);
  return {
    gateway,
    http,
    url: http.url,
    subgraphUrls,
    subgraphs: Object.fromEntries(subgraphs.map((s) => [s.name, s])),
    async stop() {
      await gateway.stop();
      await Promise.all(subgraphs.map((s) => s.stop()));
    },
  };
}
