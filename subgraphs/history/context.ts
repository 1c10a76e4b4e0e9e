import DataLoader from "dataloader";
import { betIdsByChain, betKey } from "../../core/bet-key.ts";
import type { SubgraphDeps } from "../../core/context.ts";
import type { BetModel } from "./mappers.ts";

export interface HistoryContext extends SubgraphDeps {
  /** Bets by "chainId:betId", one query per batch. */
  betByKey: DataLoader<string, BetModel | null>;
}

export function createHistoryContext(deps: SubgraphDeps): HistoryContext {
  return {
    ...deps,
    betByKey: new DataLoader(async (keys) => {
      const rows = await deps.db.prisma.bet.findMany({
        where: { OR: [...betIdsByChain(keys)].map(([chainId, betIds]) => ({ chainId, betId: { in: betIds } })) },
      });
      const byKey = new Map(rows.map((row) => [betKey(row.chainId, row.betId.toFixed(0)), row]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
  };
}
