import type { Config } from "../core/config.ts";
import type { SubgraphFactory } from "./kit/subgraph.ts";

// Every subgraph, once. What reads this list: the in-process stack (bin/stack.ts), one subgraph
// process (`bin/subgraph.ts <name>`), the gateway's routing overrides (bin/wiring.ts), composition
// (scripts/supergraph.ts) and codegen (codegen.ts). Checked against it: the configuration's routing
// URL variables (subgraphs/registry.test.ts) and docker-compose.yml (scripts/compose.test.ts).
// Factories are loaded on demand, so that tooling reading the list never loads a server.

export interface SubgraphEntry {
  name: string;
  /** The SDL file, relative to the repository root: the subgraph's contract. */
  sdl: string;
  load(): Promise<SubgraphFactory>;
  /** The environment variable that overrides the supergraph's routing URL. */
  urlVariable: keyof Config<"subgraphs">;
  /** The port of its routing URL in the supergraph (http://127.0.0.1:<port>/graphql) and in docker-compose.yml. */
  defaultPort: number;
}

export const SUBGRAPHS: readonly SubgraphEntry[] = [
  {
    name: "networks",
    sdl: "subgraphs/networks/networks.graphql",
    load: async () => (await import("./networks/server.ts")).createNetworksSubgraph,
    urlVariable: "NETWORKS_SUBGRAPH_URL",
    defaultPort: 4001,
  },
  {
    name: "results",
    sdl: "subgraphs/results/results.graphql",
    load: async () => (await import("./results/server.ts")).createResultsSubgraph,
    urlVariable: "RESULTS_SUBGRAPH_URL",
    defaultPort: 4002,
  },
  {
    name: "history",
    sdl: "subgraphs/history/history.graphql",
    load: async () => (await import("./history/server.ts")).createHistorySubgraph,
    urlVariable: "HISTORY_SUBGRAPH_URL",
    defaultPort: 4003,
  },
];

export function subgraphNamed(name: string): SubgraphEntry | undefined {
  return SUBGRAPHS.find((subgraph) => subgraph.name === name);
}

/** Every subgraph's factory, in registry order. */
export function loadSubgraphFactories(): Promise<SubgraphFactory[]> {
  return Promise.all(SUBGRAPHS.map((subgraph) => subgraph.load()));
}
