import { countBets } from "../data.ts";
import type { BetConnectionResolvers } from "../generated/resolvers-types.ts";

export const BetConnection: BetConnectionResolvers = {
  edges: (page) => page.rows.map((node) => ({ cursor: page.cursorFor(node), node })),
  nodes: (page) => page.rows,
  pageInfo: (page) => {
    const last = page.rows.at(-1);
    return { hasNextPage: page.hasNextPage, endCursor: last ? page.cursorFor(last) : null };
  },
  // Only computed when asked for; what it costs depends on the filter (see countBets).
  totalCount: (page, _args, ctx) => countBets(ctx.db, page.conditions),
};
