import type { QueryResolvers } from "../../generated/resolvers-types.ts";

// Literal `status = 'PENDING'` so PostgreSQL proves the partial index's predicate and counts from it.
export const pendingBetCount: QueryResolvers["pendingBetCount"] = async (_parent, { wallet, chainId }, ctx) => {
  if (chainId != null) {
    await ctx.networks.require(chainId);
    const [row] = await ctx.db.prisma.$queryRaw<[{ count: number }]>`
      SELECT count(*)::int AS count FROM "Bet" WHERE "player" = ${wallet} AND "chainId" = ${BigInt(chainId)} AND "status" = 'PENDING'`;
    return row.count;
  }
  const [row] = await ctx.db.prisma.$queryRaw<[{ count: number }]>`
    SELECT count(*)::int AS count FROM "Bet" WHERE "player" = ${wallet} AND "status" = 'PENDING'`;
  return row.count;
};
