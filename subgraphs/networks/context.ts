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
      const cursors = await indexingCursorsOf(deps.db, ids);
      // The heads this request shows: later requests of this process read from no server behind them
      // (and later calls of this pinned request know how far its server has replayed).
      deps.reads?.observe(cursors, deps.readPin);
      const byId = new Map(cursors.map((row) => [Number(row.chainId), row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}
