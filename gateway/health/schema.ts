import { buildFederatedSchema, loadSdl } from "../../core/schema.ts";
import type { Resolvers } from "./generated/resolvers-types.ts";
import type { HealthMonitor } from "./report.ts";

export const healthTypeDefs = loadSdl(new URL("./health.graphql", import.meta.url));

/** The `health` subgraph, executed in the gateway process through a LocalGraphQLDataSource. */
export function createHealthSchema(health: HealthMonitor) {
  const resolvers: Resolvers = {
    Query: { health: () => health.report() },
  };
  return buildFederatedSchema(healthTypeDefs, resolvers);
}
