import { MAX_AGE } from "../../../../core/max-age.ts";
import { betMaxAgeAt, cacheFor } from "../../../kit/cache-hints.ts";
import { checkBetIdCount } from "../../../../core/arguments.ts";
import { refKey } from "../../context.ts";
import { betsOnChain } from "../../data.ts";
import { mayAskFor } from "../../../kit/selection.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import type { BetRefModel } from "../../mappers.ts";

export const betResult: QueryResolvers["betResult"] = async (_parent, { chainId, betId }, ctx, info) => {
  const network = await ctx.networks.require(chainId);
  ctx.resultReads.solidityCalldata = mayAskFor(info, "solidityCalldata");
  const ref: BetRefModel = { chainId, betId };
  const bet = await ctx.betWithResult.load(refKey(ref));
  // An unknown bet may be indexed with the next block: only a finalized one is cached long.
  cacheFor(info, bet ? betMaxAgeAt(network, bet) : MAX_AGE.live);
  return bet ? ref : null;
};

export const betResults: QueryResolvers["betResults"] = async (_parent, { chainId, betIds }, ctx, info) => {
  checkBetIdCount(betIds.length);
  const network = await ctx.networks.require(chainId);
  // One statement for the list, read directly rather than through the request's DataLoader: the
  // ids are all here already, and a loader would make a promise per id (100 an answer).
  const found = await betsOnChain(ctx.db, chainId, betIds, { solidityCalldata: mayAskFor(info, "solidityCalldata") });
  let maxAge: number = MAX_AGE.final;
  const bets: (BetRefModel | null)[] = [];
  for (let i = 0; i < betIds.length; i++) {
    const row = found[i];
    const rowMaxAge = row ? betMaxAgeAt(network, row) : MAX_AGE.live;
    maxAge = Math.min(maxAge, rowMaxAge);
    bets.push(row ? { chainId, betId: betIds[i] as string, loaded: { row, maxAge: rowMaxAge } } : null);
  }
  cacheFor(info, maxAge);
  return bets;
};
