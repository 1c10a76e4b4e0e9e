// The fairness panel's arithmetic, without DOM: checked by web/fairness.test.ts under Node against
// the contract's rules (chain/betvault.ts, which the page does not bundle: it brings viem).
import type { FairnessStatsQuery } from "../../client/generated/graphql.ts";

export type GameStats = FairnessStatsQuery["fairnessStats"][number];

/**
 * Each game's win probability under the contract's rules (BetVault `_result`: won = outcome % modulus
 * < winBelow), as winBelow / modulus (the field's remainder shifts it by < 10⁻⁷⁴). Mirrors
 * chain/betvault.ts `GAMES`, which the page does not bundle (viem); web/fairness.test.ts keeps them equal.
 */
export const WIN_PROBABILITY: Readonly<Record<string, number>> = { coinflip: 1 / 2, dice: 49 / 100, wheel: 1 / 10 };

/**
 * The 95% confidence band of the observed RTP, by the normal approximation: observed ± 1.96·s/√n,
 * n the settled bets and s the standard deviation of one bet's payout/stake Y. Every game here has
 * two outcomes and a fixed multiplier m: Y = m with probability p, else 0, so E[Y] = p·m =
 * expectedRtp and Var[Y] = m²·p·(1 − p), i.e. s = expectedRtp·√((1 − p)/p). (observedRtp is
 * weighted by stake; the band treats stakes as equal.) Undefined without a settled bet or for a game
 * whose rule the page does not know.
 */
export function rtpBand(stats: Pick<GameStats, "game" | "settledBets" | "observedRtp" | "expectedRtp">): { low: number; high: number; s: number } | undefined {
  const n = Number(stats.settledBets);
  const p = WIN_PROBABILITY[stats.game];
  if (!(n > 0) || p === undefined || !(stats.expectedRtp > 0)) return undefined;
  const s = stats.expectedRtp * Math.sqrt((1 - p) / p);
  const half = (1.96 * s) / Math.sqrt(n);
  return { low: Math.max(0, stats.observedRtp - half), high: stats.observedRtp + half, s };
}
