import DataLoader from "dataloader";
import type { SubgraphDeps } from "../../core/context.ts";
import { networkConfigInclude, type NetworkConfigModel } from "./mappers.ts";

export interface NetworksContext extends SubgraphDeps {
  networkById: DataLoader<number, NetworkConfigModel | null>;
}

export function createNetworksContext(deps: SubgraphDeps): NetworksContext {
  return {
    ...deps,
    networkById: new DataLoader(async (chainIds) => {
      const rows = await deps.db.prisma.network.findMany({
        where: { chainId: { in: chainIds.map(BigInt) } },
        include: networkConfigInclude,
      });
      const byId = new Map(rows.map((row) => [Number(row.chainId), row]));
      return chainIds.map((id) => byId.get(id) ?? null);
    }),
  };
}
