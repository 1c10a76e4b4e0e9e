import DataLoader from "dataloader";
import { betKey } from "../kit/bet-key.ts";
import type { SubgraphDeps } from "../kit/deps.ts";
import { betsByKeys } from "./data.ts";
import type { BetModel } from "./mappers.ts";

export interface HistoryContext extends SubgraphDeps {
  /** Bets by "chainId:betId", one query per batch. */
  betByKey: DataLoader<string, BetModel | null>;
}

export function createHistoryContext(deps: SubgraphDeps): HistoryContext {
  return {
    ...deps,
    betByKey: new DataLoader(async (keys) => {
      const byKey = new Map((await betsByKeys(deps.db, keys)).map((row) => [betKey(row.chainId, row.betId.toFixed(0)), row]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
  };
}
