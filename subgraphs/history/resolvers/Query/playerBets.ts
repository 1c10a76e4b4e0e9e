import { checkPageSize } from "../../../../core/arguments.ts";
import { decodeCursor, encodeCursor, queryFingerprints } from "../../cursor.ts";
import { betPage, countBets, WIDE_BET_FIELDS } from "../../data.ts";
import { betFilterConditions } from "../../filter-conditions.ts";
import { checkGame, checkedStatuses } from "../../filter-checks.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import { asksOnlyTotalCount } from "../../../../core/selection.ts";
import { pageJoinsOf } from "../../selection.ts";
import { mayAskFor } from "../../../kit/selection.ts";

export const playerBets: QueryResolvers["playerBets"] = async (_parent, args, ctx, info) => {
  const first = args.first ?? 20;
  checkPageSize(first);
  const direction = args.orderDirection ?? "DESC";
  const filter = args.filter ?? {};
  if (filter.chainId != null) await ctx.networks.require(filter.chainId, "filter.chainId");
  const statuses = checkedStatuses(filter.status);
  checkGame(filter.game);
  const conditions = betFilterConditions({
    wallet: args.wallet,
    chainId: filter.chainId ?? undefined,
    statuses,
    game: filter.game ?? undefined,
    placedFrom: filter.placedFrom ?? undefined,
    placedTo: filter.placedTo ?? undefined,
  });
  const filterKey = [args.wallet, filter.chainId ?? null, statuses ?? null, filter.game ?? null, filter.placedFrom ?? null, filter.placedTo ?? null];
  const fingerprints = queryFingerprints([...filterKey, direction], ctx);
  const [fingerprint] = fingerprints;
  const after = args.after != null ? decodeCursor(args.after, fingerprints) : undefined;
  // The bets' networks and results the query selects come in the page's own statement; a proof's
  // solidityCalldata (~850 bytes), piB and piC (~700) only when the operation can select them.
  const joins = {
    ...pageJoinsOf(info),
    solidityCalldata: mayAskFor(info, "solidityCalldata"),
    wholeProof: mayAskFor(info, "piB") || mayAskFor(info, "piC"),
  };
  // Every column of each bet only when the operation can select one beyond a wallet page's usual fields.
  const wide = WIDE_BET_FIELDS.some((field) => mayAskFor(info, field));
  // A count from the counters comes in the page's own statement when the operation can ask for it.
  const counted = conditions.counterWhere !== null && mayAskFor(info, "totalCount");
  const page = () => betPage(ctx.db, conditions.filter, { after, direction, take: first + 1, joins, wide, counted });
  // A connection asked only its totalCount reads no page (no pool connection for rows nothing selects).
  const read: Awaited<ReturnType<typeof page>> = asksOnlyTotalCount(info) ? { bets: [] } : await (conditions.scans ? ctx.expensive(page) : page());
  const { bets: rows, totalCount } = read;
  return {
    rows: rows.slice(0, first),
    hasNextPage: rows.length > first,
    // Aliases under one filter share one count; the order of the page does not change it.
    count: () =>
      ctx.countOnce(JSON.stringify(["playerBets", ...filterKey]), () => {
        if (totalCount !== undefined) return Promise.resolve(totalCount);
        const count = () => countBets(ctx.db, conditions);
        return conditions.counterWhere ? count() : ctx.expensive(count);
      }),
    cursorFor: (bet) => encodeCursor(fingerprint, { placedBlock: bet.placedBlock, logIndex: bet.placedLogIndex, chainId: bet.chainId }),
  };
};
