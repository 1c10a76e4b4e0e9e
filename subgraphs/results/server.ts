import { defineSubgraph } from "../kit/subgraph.ts";
import { createResultsContext } from "./context.ts";
import { resolvers } from "./resolvers/index.ts";

export const createResultsSubgraph = defineSubgraph({
  name: "results",
  sdl: new URL("./results.graphql", import.meta.url),
  resolvers,
  createContext: createResultsContext,
  // A result's proof never changes (whether the result itself stays is hinted on Bet.result); its
  // row comes shaped as the API serves it (mappers.ts), so it needs no resolver either.
  finalFields: ["BetResult.proof"],
});
