import { defineSubgraph } from "../kit/subgraph.ts";
import { createNetworksContext } from "./context.ts";
import { resolvers } from "./resolvers/index.ts";

export const createNetworksSubgraph = defineSubgraph({
  name: "networks",
  sdl: new URL("./networks.graphql", import.meta.url),
  resolvers,
  createContext: createNetworksContext,
});
