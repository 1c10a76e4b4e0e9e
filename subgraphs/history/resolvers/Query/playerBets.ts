import { InputError } from "../../../../core/errors.ts";
import type { Prisma } from "../../../../prisma/generated/client.ts";
import { decodeCursor, encodeCursor, queryFingerprint, type SortKey } from "../../cursor.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

const MAX_PAGE = 100;
const MAX_GAME_LENGTH = 64;
const INT8_MAX = (1n << 63n) - 1n;

/** Rows strictly after `key` in the page order. The `lte`/`gte` bound on placedBlock is what lets
 * PostgreSQL start the index scan at the cursor instead of filtering from the top (no OFFSET cost). */
function after(key: SortKey, direction: "ASC" | "DESC"): Prisma.BetWhereInput {
  const beyond = direction === "DESC" ? "lt" : "gt";
  const upTo = direction === "DESC" ? "lte" : "gte";
  return {
    placedBlock: { [upTo]: key.placedBlock },
    OR: [
      { placedBlock: { [beyond]: key.placedBlock } },
      { placedBlock: key.placedBlock, placedLogIndex: { [beyond]: key.logIndex } },
      { placedBlock: key.placedBlock, placedLogIndex: key.logIndex, chainId: { [beyond]: key.chainId } },
    ],
  };
}

/** Unix-seconds bounds beyond what the column holds: such a `from` matches nothing, such a `to` bounds nothing. */
function placedAtRange(from: string | null | undefined, to: string | null | undefined): Prisma.BigIntFilter | undefined {
  const range: Prisma.BigIntFilter = {};
  if (from != null) {
    if (BigInt(from) > INT8_MAX) range.gt = INT8_MAX;
    else range.gte = BigInt(from);
  }
  if (to != null && BigInt(to) <= INT8_MAX) range.lt = BigInt(to);
  return Object.keys(range).length > 0 ? range : undefined;
}

export const playerBets: QueryResolvers["playerBets"] = async (_parent, args, ctx) => {
  const first = args.first ?? 20;
  if (first < 1 || first > MAX_PAGE) throw new InputError(`first must be from 1 to ${MAX_PAGE}`, { argumentName: "first" });
  const direction = args.orderDirection ?? "DESC";
  const filter = args.filter ?? {};
  if (filter.chainId != null) await ctx.networks.require(filter.chainId, "filter.chainId");
  if (filter.status != null && filter.status.length === 0) {
    throw new InputError("filter.status must list at least one status; omit it to match every status", { argumentName: "filter.status" });
  }
  if (filter.game != null && filter.game.length > MAX_GAME_LENGTH) {
    throw new InputError(`filter.game is at most ${MAX_GAME_LENGTH} characters`, { argumentName: "filter.game" });
  }
  const statuses = filter.status ? [...new Set(filter.status)].sort() : undefined;

  // The columns PlayerBetCount is keyed by: the same condition holds on Bet and on the counters.
  const byCounterKey = {
    player: args.wallet,
    ...(filter.chainId != null ? { chainId: BigInt(filter.chainId) } : {}),
    ...(statuses ? { status: { in: statuses } } : {}),
  };
  const where: Prisma.BetWhereInput = { ...byCounterKey, ...(filter.game != null ? { game: filter.game } : {}) };
  const placedAt = placedAtRange(filter.placedFrom, filter.placedTo);
  if (placedAt) where.placedAt = placedAt;
  const countable = filter.game == null && placedAt === undefined;
  const fingerprint = queryFingerprint([args.wallet, filter.chainId ?? null, statuses ?? null, filter.game ?? null,
    filter.placedFrom ?? null, filter.placedTo ?? null, direction]);
  const bound = args.after != null ? after(decodeCursor(args.after, fingerprint), direction) : undefined;
  const order = direction === "DESC" ? "desc" : "asc";

  const rows = await ctx.db.prisma.bet.findMany({
    where: bound ? { AND: [where, bound] } : where,
    orderBy: [{ placedBlock: order }, { placedLogIndex: order }, { chainId: order }],
    take: first + 1,
  });
  return {
    rows: rows.slice(0, first),
    hasNextPage: rows.length > first,
    where,
    counterWhere: countable ? byCounterKey : null,
    cursorFor: (bet) => encodeCursor(fingerprint, { placedBlock: bet.placedBlock, logIndex: bet.placedLogIndex, chainId: bet.chainId }),
  };
};
