import DataLoader from "dataloader";
import type { SubgraphDeps } from "../kit/deps.ts";
import { contractsOf, indexingCursorsOf, networksOf } from "./data.ts";
import type { ContractAddressModel, IndexingStatusModel, NetworkConfigModel } from "./mappers.ts";

export interface NetworksContext extends SubgraphDeps {
  networkById: DataLoader<number, NetworkConfigModel | null>;
  /** Each part of a NetworkConfig is read only when selected, one statement per batch. */
  contractsByChain: DataLoader<number, ContractAddressModel[]>;
  cursorByChain: DataLoader<number, IndexingStatusModel["cursor"]>;
}

export function createNetworksContext(deps: SubgraphDeps): NetworksContext {
  return {
    ...deps,
    networkById: new DataLoader(async (ids) => {
      const byId = new Map((await networksOf(deps.db, ids)).map((row) => [Number(row.chainId), row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    contractsByChain: new DataLoader(async (ids) => {
      const rows = await contractsOf(deps.db, ids);
      return ids.map((id) => rows.filter((row) => Number(row.chainId) === id));
    }),
    cursorByChain: new DataLoader(async (ids) => {
      // The heads the request reads at (kit/read-at.ts, which also raises the read router's floor
      // with them): indexedBlock is what the answer's readAt says.
      const cursors = deps.readAt?.cursors ?? (await indexingCursorsOf(deps.db, ids));
      const byId = new Map(cursors.map((row) => [Number(row.chainId), row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}
