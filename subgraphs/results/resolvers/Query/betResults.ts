import { InputError } from "../../../../core/errors.ts";
import { refKey } from "../../context.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import type { BetRefModel } from "../../mappers.ts";

const MAX_IDS = 100;

export const betResult: QueryResolvers["betResult"] = async (_parent, { chainId, betId }, ctx) => {
  await ctx.networks.require(chainId);
  const ref: BetRefModel = { chainId, betId };
  return (await ctx.betWithResult.load(refKey(ref))) ? ref : null;
};

export const betResults: QueryResolvers["betResults"] = async (_parent, { chainId, betIds }, ctx) => {
  if (betIds.length > MAX_IDS) throw new InputError(`betIds takes at most ${MAX_IDS} ids`, { argumentName: "betIds" });
  await ctx.networks.require(chainId);
  const refs = betIds.map((betId): BetRefModel => ({ chainId, betId }));
  const found = await ctx.betWithResult.loadMany(refs.map(refKey));
  return refs.map((ref, i) => {
    const row = found[i];
    if (row instanceof Error) throw row;
    return row ? ref : null;
  });
};
