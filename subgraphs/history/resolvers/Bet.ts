import { MAX_AGE } from "../../../core/max-age.ts";
import { betMaxAge, cacheFor } from "../../kit/cache-hints.ts";
import { betDepth } from "../../../core/networks.ts";
import { formatUInt256, parseChainId, parseUInt256 } from "../../../core/scalars.ts";
import { betKey } from "../../kit/bet-key.ts";
import { hintedResult } from "../../kit/bet-result.ts";
import { tokenKey } from "../data.ts";
import type { BetResolvers } from "../generated/resolvers-types.ts";

export const Bet: BetResolvers = {
  // Representations come from other subgraphs as raw JSON (`_Any`): check them like input.
  __resolveReference: async (reference, ctx, info) => {
    let key: string;
    try {
      key = betKey(parseChainId(reference.chainId), parseUInt256(reference.betId));
    } catch {
      return null;
    }
    const bet = await ctx.betByKey.load(key);
    cacheFor(info, bet ? await betMaxAge(ctx.networks, bet) : MAX_AGE.live);
    return bet;
  },
  // network and tokenInfo are final fields (../server.ts): never hinted. The network's settings
  // come with the bet when its page statement joined them (NetworkConfig.ts).
  network: (bet) => bet.joined?.network ?? { chainId: bet.chainId },
  tokenInfo: async (bet, _args, ctx) => {
    // A page reads `token` whenever the operation can select tokenInfo (data.ts WIDE_BET_FIELDS).
    if (bet.token === undefined) throw new Error(`bet ${bet.chainId}:${formatUInt256(bet.betId)} was read without its token`);
    // Read once from the chain and never changed (the native coin's only with the configuration).
    const token = await ctx.tokenByKey.load(tokenKey(bet.chainId, bet.token));
    // The indexer writes the row in the transaction of the token's first bet: a miss is a broken invariant.
    if (!token) throw new Error(`no Token row for ${bet.token} on chain ${bet.chainId}`);
    return token;
  },
  confirmations: async (bet, _args, ctx, info) => {
    cacheFor(info, MAX_AGE.live); // grows with every block, final or not
    return betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).confirmations;
  },
  finalized: async (bet, _args, ctx) => betDepth(bet.lastChangeBlock, await ctx.networks.get(bet.chainId)).finalized,
  // The results subgraph's field, shared (history.graphql): the result the page statement joined,
  // else one batched read; hinted as the results subgraph hints it (kit/bet-result.ts).
  result: (bet, _args, ctx, info) => {
    const joined = bet.joined?.result;
    if (joined !== undefined) return hintedResult(info, ctx.networks, bet, joined);
    return ctx.resultByKey.load(betKey(bet.chainId, formatUInt256(bet.betId))).then((result) => hintedResult(info, ctx.networks, bet, result));
  },
};
