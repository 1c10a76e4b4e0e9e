import { defineSubgraph } from "../kit/subgraph.ts";
import { createResultsContext } from "./context.ts";
import { resolvers } from "./resolvers/index.ts";

export const createResultsSubgraph = defineSubgraph({
  name: "results",
  sdl: new URL("./results.graphql", import.meta.url),
  resolvers,
  createContext: createResultsContext,
});
