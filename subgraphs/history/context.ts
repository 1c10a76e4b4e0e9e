import DataLoader from "dataloader";
import { betKey } from "../kit/bet-key.ts";
import type { SubgraphDeps } from "../kit/deps.ts";
import type { BetResultModel } from "../kit/bet-result.ts";
import { betsByKeys, networkSettingsOf, resultsByKeys, tokenKey, tokensByKeys } from "./data.ts";
import type { BetModel, NetworkSettings, TokenModel } from "./mappers.ts";

export interface HistoryContext extends SubgraphDeps {
  /** Bets by "chainId:betId", one query per batch. */
  betByKey: DataLoader<string, BetModel | null>;
  /** Tokens by "chainId:address" (tokenKey), one query for every token of a page. */
  tokenByKey: DataLoader<string, TokenModel | null>;
  /** Results by "chainId:betId" (null: none), for bets whose statement did not join them; one query per batch. */
  resultByKey: DataLoader<string, BetResultModel | null>;
  /** Networks' settings by chain id, for bets whose statement did not join them; one query per batch. */
  networkByChain: DataLoader<number, NetworkSettings | null>;
  /**
   * A totalCount of this request by its normalised filter (`key`): the same aggregate asked twice in
   * one request (aliases) is computed once. Per request only: counts change with every block.
   */
  countOnce(key: string, count: () => Promise<number>): Promise<number>;
  /** Runs a statement that may read much of the table in the process's expensive lane, as this request's client; directly without a lane. */
  expensive<T>(statement: () => Promise<T>): Promise<T>;
}

export function createHistoryContext(deps: SubgraphDeps): HistoryContext {
  const counts = new Map<string, Promise<number>>();
  const lane = deps.expensiveLane;
  const client = deps.clientAddress ?? "unknown";
  return {
    ...deps,
    expensive: (statement) => (lane ? lane.run(client, statement) : statement()),
    countOnce(key, count) {
      let pending = counts.get(key);
      if (!pending) {
        pending = count();
        counts.set(key, pending);
      }
      return pending;
    },
    betByKey: new DataLoader(async (keys) => {
      const byKey = new Map((await betsByKeys(deps.db, keys)).map((row) => [betKey(row.chainId, row.betId.toFixed(0)), row]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
    resultByKey: new DataLoader((keys) => resultsByKeys(deps.db, keys)),
    networkByChain: new DataLoader(async (chainIds) => {
      const byId = new Map((await networkSettingsOf(deps.db, chainIds)).map((row) => [Number(row.chainId), row]));
      return chainIds.map((chainId) => byId.get(chainId) ?? null);
    }),
    tokenByKey: new DataLoader(async (keys) => {
      const byKey = new Map((await tokensByKeys(deps.db, keys)).map((row) => [tokenKey(row.chainId, row.address), row]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
  };
}
