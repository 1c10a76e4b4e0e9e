import { GAME_IDS, isGameId } from "../../../../chain/betvault.ts";
import { checkGameArgument } from "../../../../core/arguments.ts";
import { finalityBound } from "../../../../core/finality.ts";
import { MAX_AGE } from "../../../../core/max-age.ts";
import type { NetworkEntry } from "../../../../core/networks.ts";
import { cacheFor } from "../../../kit/cache-hints.ts";
import { fairnessCounters, type FairnessCounterRow } from "../../data.ts";
import { chiSquare, chiSquarePValue, expectedRtp, HISTOGRAM_BUCKETS, ratio } from "../../fairness.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";
import type { GameStatsModel } from "../../mappers.ts";

const EMPTY_HISTOGRAM: readonly string[] = Array(HISTOGRAM_BUCKETS).fill("0");

/** One entry from a counter row (or zeros), its statistics computed. */
function gameStats(chainId: number, game: string, row: FairnessCounterRow | undefined): GameStatsModel {
  const histogram = (row?.outcomeHistogram ?? EMPTY_HISTOGRAM).map(BigInt);
  const settledBets = BigInt(row?.settledBets ?? 0);
  const totalStake = BigInt(row?.totalStake ?? 0);
  const totalPayout = BigInt(row?.totalPayout ?? 0);
  const statistic = chiSquare(histogram);
  const notFinal = BigInt(row?.notFinal ?? 0);
  return {
    chainId,
    game,
    settledBets,
    wonBets: BigInt(row?.wonBets ?? 0),
    refundedBets: BigInt(row?.refundedBets ?? 0),
    totalStake,
    totalPayout,
    observedRtp: ratio(totalPayout, totalStake),
    expectedRtp: expectedRtp(game),
    outcomeHistogram: histogram,
    chiSquare: statistic,
    // No outcome yet: nothing contradicts uniformity.
    pValue: settledBets === 0n ? 1 : chiSquarePValue(statistic),
    finalizedSettledBets: settledBets > notFinal ? settledBets - notFinal : 0n,
  };
}

export const fairnessStats: QueryResolvers["fairnessStats"] = async (_parent, { chainId, game }, ctx, info) => {
  checkGameArgument(game, "game");
  const networks: NetworkEntry[] = chainId != null ? [await ctx.networks.require(chainId)] : [...(await ctx.networks.all()).values()];
  networks.sort((a, b) => a.chainId - b.chainId);
  const rows = await fairnessCounters(
    ctx.db,
    networks.map((n) => n.chainId),
    networks.map((n) => finalityBound(n.headBlock, n.confirmations)),
    game ?? null,
  );
  // Counts move with every block.
  cacheFor(info, MAX_AGE.live);
  const byKey = new Map(rows.map((row) => [`${row.chainId}:${row.game}`, row]));
  const stats: GameStatsModel[] = [];
  for (const network of networks) {
    // The contract's games always have an entry; another game only once counted (imported data).
    const games = new Set<string>(game != null ? (isGameId(game) ? [game] : []) : GAME_IDS);
    for (const row of rows) if (Number(row.chainId) === network.chainId) games.add(row.game);
    for (const name of [...games].sort()) stats.push(gameStats(network.chainId, name, byKey.get(`${network.chainId}:${name}`)));
  }
  return stats;
};
