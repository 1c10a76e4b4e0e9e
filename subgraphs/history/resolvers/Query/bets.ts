import { checkPageSize } from "../../../../core/arguments.ts";
import { decodeExplorerCursor, encodeExplorerCursor, queryFingerprints } from "../../cursor.ts";
import { countExplorerBets, explorerPage } from "../../data.ts";
import { explorerConditions } from "../../explorer-conditions.ts";
import { checkGame, checkedStatuses } from "../../filter-checks.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import { asksOnlyTotalCount } from "../../../../core/selection.ts";
import type { Bet } from "../../../../prisma/generated/client.ts";

export const bets: QueryResolvers["bets"] = async (_parent, args, ctx, info) => {
  const first = args.first ?? 20;
  checkPageSize(first);
  const direction = args.orderDirection ?? "DESC";
  const filter = args.filter ?? {};
  if (filter.chainId != null) await ctx.networks.require(filter.chainId, "filter.chainId");
  const statuses = checkedStatuses(filter.status);
  checkGame(filter.game);
  const normalised = {
    chainId: filter.chainId ?? undefined,
    statuses,
    game: filter.game ?? undefined,
    player: filter.player ?? undefined,
    token: filter.token ?? undefined,
    placedFrom: filter.placedFrom ?? undefined,
    placedTo: filter.placedTo ?? undefined,
  };
  const conditions = explorerConditions(normalised);
  // "bets" first: never the fingerprint of a playerBets query, whose list starts with a wallet.
  const fingerprints = queryFingerprints(["bets", ...Object.values(normalised).map((value) => value ?? null), direction], ctx);
  const [fingerprint] = fingerprints;
  const after = args.after != null ? decodeExplorerCursor(args.after, fingerprints) : undefined;
  const page = () => explorerPage(ctx.db, conditions, { after, direction, take: first + 1 });
  // A connection asked only its totalCount reads no page (no pool connection for rows nothing selects).
  const rows = asksOnlyTotalCount(info) ? [] : await (conditions.scans ? ctx.expensive(page) : page());
  return {
    rows: rows.slice(0, first),
    hasNextPage: rows.length > first,
    // Aliases under one filter share one count; the order of the page does not change it.
    count: () =>
      ctx.countOnce(JSON.stringify(["bets", ...Object.values(normalised)]), () => {
        const count = () => countExplorerBets(ctx.db, conditions);
        return conditions.counter ? count() : ctx.expensive(count);
      }),
    // The explorer's rows have every column (explorerPage).
    cursorFor: (bet: Bet) => encodeExplorerCursor(fingerprint, { placedAt: bet.placedAt, chainId: bet.chainId, betId: BigInt(bet.betId.toFixed(0)) }),
  };
};
