import DataLoader from "dataloader";
import { betKey } from "../kit/bet-key.ts";
import type { SubgraphDeps } from "../kit/deps.ts";
import { betsWithResults, type ResultReads } from "./data.ts";
import type { BetRefModel, BetWithResult } from "./mappers.ts";

export interface ResultsContext extends SubgraphDeps {
  /** Bets by "chainId:betId" with their result (null while unsettled); null when unknown. One query per batch. */
  betWithResult: DataLoader<string, BetWithResult | null>;
  /** What betWithResult reads: the resolvers set it from the operation before they load (one operation a request). */
  resultReads: ResultReads;
}

export function refKey(ref: BetRefModel): string {
  return betKey(ref.chainId, ref.betId);
}

export function createResultsContext(deps: SubgraphDeps): ResultsContext {
  const resultReads: ResultReads = { solidityCalldata: true };
  return { ...deps, resultReads, betWithResult: new DataLoader((keys) => betsWithResults(deps.db, keys, resultReads)) };
}
