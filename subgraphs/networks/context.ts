import DataLoader from "dataloader";
import type { SubgraphDeps } from "../../core/context.ts";
import type { ContractAddressModel, IndexingStatusModel, NetworkConfigModel } from "./mappers.ts";

export interface NetworksContext extends SubgraphDeps {
  networkById: DataLoader<number, NetworkConfigModel | null>;
  /** Each part of a NetworkConfig is read only when selected, one statement per batch. */
  contractsByChain: DataLoader<number, ContractAddressModel[]>;
  cursorByChain: DataLoader<number, IndexingStatusModel["cursor"]>;
}

const toBigInts = (ids: readonly number[]) => ids.map(BigInt);

export function createNetworksContext(deps: SubgraphDeps): NetworksContext {
  const { prisma } = deps.db;
  return {
    ...deps,
    networkById: new DataLoader(async (ids) => {
      const rows = await prisma.network.findMany({ where: { chainId: { in: toBigInts(ids) } } });
      const byId = new Map(rows.map((row) => [Number(row.chainId), row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    contractsByChain: new DataLoader(async (ids) => {
      const rows = await prisma.contract.findMany({ where: { chainId: { in: toBigInts(ids) } }, orderBy: { name: "asc" } });
      return ids.map((id) => rows.filter((row) => Number(row.chainId) === id));
    }),
    cursorByChain: new DataLoader(async (ids) => {
      const rows = await prisma.indexingCursor.findMany({ where: { chainId: { in: toBigInts(ids) } } });
      const byId = new Map(rows.map((row) => [Number(row.chainId), row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}
