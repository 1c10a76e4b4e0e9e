import DataLoader from "dataloader";
import type { SubgraphDeps } from "../../core/context.ts";
import type { BetRefModel, BetResultModel } from "./mappers.ts";

export interface ResultsContext extends SubgraphDeps {
  /** Bets by "chainId:betId" with their result (null while unsettled); null when unknown. One query per batch. */
  betWithResult: DataLoader<string, { result: BetResultModel | null } | null>;
}

export function betKey(ref: BetRefModel): string {
  return `${ref.chainId}:${ref.betId}`;
}

export function createResultsContext(deps: SubgraphDeps): ResultsContext {
  return {
    ...deps,
    betWithResult: new DataLoader(async (keys) => {
      const idsByChain = new Map<string, string[]>();
      for (const key of keys) {
        const [chainId, betId] = key.split(":") as [string, string];
        idsByChain.set(chainId, [...(idsByChain.get(chainId) ?? []), betId]);
      }
      const rows = await deps.db.prisma.bet.findMany({
        where: { OR: [...idsByChain].map(([chainId, betIds]) => ({ chainId: BigInt(chainId), betId: { in: betIds } })) },
        select: { chainId: true, betId: true, result: true },
      });
      const byKey = new Map(rows.map((row) => [`${row.chainId}:${row.betId.toFixed(0)}`, { result: row.result }]));
      return keys.map((key) => byKey.get(key) ?? null);
    }),
  };
}
