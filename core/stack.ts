import type { GatewayProtection } from "../gateway/protection.ts";
import type { ResponseCacheStore } from "../gateway/response-cache.ts";
import { createGateway, type Gateway } from "../gateway/server.ts";
import { createHistorySubgraph } from "../subgraphs/history/server.ts";
import { createNetworksSubgraph } from "../subgraphs/networks/server.ts";
import { createResultsSubgraph } from "../subgraphs/results/server.ts";
import type { SubgraphDeps } from "./context.ts";
import type { RunningHttpServer } from "./http.ts";

export const SUBGRAPH_FACTORIES = [createNetworksSubgraph, createResultsSubgraph, createHistorySubgraph];

export interface StackOptions {
  deps: SubgraphDeps;
  host: string;
  port: number;
  version: string;
  supergraphPath: string;
  maxBodyBytes: number;
  redis?: { ping(): Promise<unknown> };
  health?: { maxLagBlocks: number; maxStalenessSeconds: number };
  protection?: GatewayProtection;
  responseCache?: ResponseCacheStore;
  responseCacheGenerationPollMs?: number;
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
 * Every subgraph and the gateway in one process, subgraphs on free loopback ports: the embedded
 * default of `npm start`, and what the tests run against. Production runs each as its own service.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const subgraphs = SUBGRAPH_FACTORIES.map((factory) => factory(options.deps));
  const subgraphUrls: Record<string, string> = {};
  for (const subgraph of subgraphs) {
    const running = await subgraph.listen("127.0.0.1", 0);
    subgraphUrls[subgraph.name] = `${running.url}/graphql`;
  }
  const gateway = createGateway({
    db: options.deps.db,
    logger: options.deps.logger,
    production: options.deps.production,
    version: options.version,
    supergraphPath: options.supergraphPath,
    subgraphUrls,
    redis: options.redis,
    maxBodyBytes: options.maxBodyBytes,
    health: options.health ?? { maxLagBlocks: 64, maxStalenessSeconds: 300 },
    ...options.protection,
    responseCache: options.responseCache,
    responseCacheGenerationPollMs: options.responseCacheGenerationPollMs,
  });
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
