import { defineSubgraph } from "../kit/subgraph.ts";
import { createHistoryContext } from "./context.ts";
import { resolvers } from "./resolvers/index.ts";

export const createHistorySubgraph = defineSubgraph({
  name: "history",
  sdl: new URL("./history.graphql", import.meta.url),
  resolvers,
  createContext: createHistoryContext,
  // A bet's network and token never change (the native coin's only with the configuration); a
  // result's proof never changes (whether the result itself stays is hinted on Bet.result).
  finalFields: ["Bet.network", "Bet.tokenInfo", "BetResult.proof"],
  // Counts and pages no index serves run in the process's expensive lane (kit/expensive-lane.ts).
  usesExpensiveLane: true,
});
