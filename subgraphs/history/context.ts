import DataLoader from "dataloader";
import type { SubgraphDeps } from "../../core/context.ts";
import type { BetModel } from "./mappers.ts";

export interface HistoryContext extends SubgraphDeps {
  /** Bets by "chainId:betId", one query per batch. */
  betByKey: DataLoader<string, BetModel | null>;
}

export function betKey(chainId: number | bigint, betId: string): string {
  return `${chainId}:${betId}`;
}

export function createHistoryContext(deps: SubgraphDeps): HistoryContext {
  return {
    ...deps,
    betByKey: new DataLoader(async (keys) => {
      const idsByChain = new Map<string, string[]>();
      for (const key of keys) {
        const [chainId, betId] = key.split(":") as [string, string];
        idsByChain.set(chainId, [...(idsByChain.get(chainId) ?? []), betId]);
      }
      const rows = await deps.db.prisma.bet.findMany({
        where: { OR: [...idsByChain].map(([chainId, betIds]) => ({ chainId: BigInt(chainId), betId: { in: betIds } })) },
      });
      const byKey = new Map(rows.map((row) => [betKey(row.chainId, row.betId.toFixed(0)), row]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
  };
}
