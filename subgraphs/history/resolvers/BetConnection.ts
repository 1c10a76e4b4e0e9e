import type { BetConnectionResolvers } from "../generated/resolvers-types.ts";

export const BetConnection: BetConnectionResolvers = {
  edges: (page) => page.rows.map((node) => ({ cursor: page.cursorFor(node), node })),
  nodes: (page) => page.rows,
  pageInfo: (page) => {
    const last = page.rows.at(-1);
    return { hasNextPage: page.hasNextPage, endCursor: last ? page.cursorFor(last) : null };
  },
  // Only computed when asked for. Filters on chainId / status alone: the sum of at most
  // (networks × 3) counter rows kept by triggers (O(1) in the wallet's bets). With game or a time
  // range: an exact count over the wallet's index range (O(bets of the wallet)).
  totalCount: async (page, _args, ctx) => {
    if (!page.counterWhere) return ctx.db.prisma.bet.count({ where: page.where });
    const { _sum } = await ctx.db.prisma.playerBetCount.aggregate({ where: page.counterWhere, _sum: { bets: true } });
    return Number(_sum.bets ?? 0n);
  },
};
