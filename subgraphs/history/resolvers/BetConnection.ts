import type { BetConnectionResolvers } from "../generated/resolvers-types.ts";

export const BetConnection: BetConnectionResolvers = {
  edges: (page) => page.rows.map((node) => ({ cursor: page.cursorFor(node), node })),
  nodes: (page) => page.rows,
  pageInfo: (page) => {
    const last = page.rows.at(-1);
    return { hasNextPage: page.hasNextPage, endCursor: last ? page.cursorFor(last) : null };
  },
  // Only computed when asked for; what it costs depends on the filter (countBets, countExplorerBets).
  totalCount: (page) => page.count(),
};
