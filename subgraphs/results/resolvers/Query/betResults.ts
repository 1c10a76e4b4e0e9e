import { MAX_AGE } from "../../../../core/max-age.ts";
import { betMaxAgeAt, cacheFor } from "../../../kit/cache-hints.ts";
import { checkBetIdCount } from "../../../../core/arguments.ts";
import { refKey } from "../../context.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import type { BetRefModel } from "../../mappers.ts";

export const betResult: QueryResolvers["betResult"] = async (_parent, { chainId, betId }, ctx, info) => {
  const network = await ctx.networks.require(chainId);
  const ref: BetRefModel = { chainId, betId };
  const bet = await ctx.betWithResult.load(refKey(ref));
  // An unknown bet may be indexed with the next block: only a finalized one is cached long.
  cacheFor(info, bet ? betMaxAgeAt(network, bet) : MAX_AGE.live);
  return bet ? ref : null;
};

export const betResults: QueryResolvers["betResults"] = async (_parent, { chainId, betIds }, ctx, info) => {
  checkBetIdCount(betIds.length);
  const network = await ctx.networks.require(chainId);
  const refs = betIds.map((betId): BetRefModel => ({ chainId, betId }));
  const found = await ctx.betWithResult.loadMany(refs.map(refKey));
  let maxAge: number = MAX_AGE.final;
  const bets = [];
  for (const [i, ref] of refs.entries()) {
    const row = found[i];
    if (row instanceof Error) throw row;
    maxAge = Math.min(maxAge, row ? betMaxAgeAt(network, row) : MAX_AGE.live);
    bets.push(row ? { ...ref, loaded: row } : null);
  }
  cacheFor(info, maxAge);
  return bets;
};
