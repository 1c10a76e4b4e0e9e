import { checkPageSize } from "../../../../core/arguments.ts";
import { InputError } from "../../../../core/errors.ts";
import { decodeCursor, encodeCursor, queryFingerprint } from "../../cursor.ts";
import { betFilterConditions, betPage } from "../../data.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

const MAX_GAME_LENGTH = 64;

export const playerBets: QueryResolvers["playerBets"] = async (_parent, args, ctx) => {
  const first = args.first ?? 20;
  checkPageSize(first);
  const direction = args.orderDirection ?? "DESC";
  const filter = args.filter ?? {};
  if (filter.chainId != null) await ctx.networks.require(filter.chainId, "filter.chainId");
  if (filter.status != null && filter.status.length === 0) {
    throw new InputError("filter.status must list at least one status; omit it to match every status", { argumentName: "filter.status" });
  }
  if (filter.game != null && filter.game.length > MAX_GAME_LENGTH) {
    throw new InputError(`filter.game is at most ${MAX_GAME_LENGTH} characters`, { argumentName: "filter.game" });
  }
  // PostgreSQL text cannot hold U+0000, so no game id contains it (and the database would refuse the query).
  if (filter.game?.includes("\u0000")) {
    throw new InputError("filter.game must not contain the NUL character (U+0000)", { argumentName: "filter.game" });
  }
  const statuses = filter.status ? [...new Set(filter.status)].sort() : undefined;
  const conditions = betFilterConditions({
    wallet: args.wallet,
    chainId: filter.chainId ?? undefined,
    statuses,
    game: filter.game ?? undefined,
    placedFrom: filter.placedFrom ?? undefined,
    placedTo: filter.placedTo ?? undefined,
  });
  const fingerprint = queryFingerprint([
    args.wallet,
    filter.chainId ?? null,
    statuses ?? null,
    filter.game ?? null,
    filter.placedFrom ?? null,
    filter.placedTo ?? null,
    direction,
  ]);
  const after = args.after != null ? decodeCursor(args.after, fingerprint) : undefined;
  const rows = await betPage(ctx.db, conditions.where, { after, direction, take: first + 1 });
  return {
    rows: rows.slice(0, first),
    hasNextPage: rows.length > first,
    conditions,
    cursorFor: (bet) => encodeCursor(fingerprint, { placedBlock: bet.placedBlock, logIndex: bet.placedLogIndex, chainId: bet.chainId }),
  };
};
