/**
 * The arithmetic of `fairnessStats` (docs/reference/fairness.md), pure: the outcome histogram's
 * buckets, the chi-square test of the histogram against the uniform distribution, and each game's
 * expected return to player from the contract's rules. No I/O, unit-tested on its own.
 */
import { BPS, FIELD_MODULUS, GAMES, isGameId } from "../../chain/betvault.ts";

/** Buckets of the outcome histogram: bucket i counts outcomes in [i·r/16, (i+1)·r/16). */
export const HISTOGRAM_BUCKETS = 16;

/** The bucket of an outcome in [0, r): floor(16·outcome / r), exactly (the migration's SQL computes the same). */
export function bucketOf(outcome: bigint): number {
  return Number((BigInt(HISTOGRAM_BUCKETS) * outcome) / FIELD_MODULUS);
}

/**
 * Pearson's chi-square statistic of `counts` against equal expected counts. 0 when there is no
 * observation (nothing to test).
 */
export function chiSquare(counts: readonly bigint[]): number {
  const total = counts.reduce((sum, n) => sum + n, 0n);
  if (total === 0n) return 0;
  // Σ (n − N/k)² / (N/k) = (k·Σ n² − N²) / N, in integers: exact for any count a table can hold.
  const k = BigInt(counts.length);
  const numerator = k * counts.reduce((sum, n) => sum + n * n, 0n) - total * total;
  return Number(numerator) / Number(total);
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 significant digits). */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let sum = c[0]!;
  for (let i = 1; i < c.length; i++) sum += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

const EPSILON = 1e-15;
const MAX_ITERATIONS = 1000;
const TINY = 1e-300;

/**
 * The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x ≥ 0:
 * the series of P(a, x) below x < a + 1, Lentz's continued fraction of Q above it (where each
 * converges fast), as Numerical Recipes computes it.
 */
export function upperRegularizedGamma(a: number, x: number): number {
  if (!(a > 0) || !(x >= 0)) throw new RangeError(`Q(${a}, ${x}) is undefined`);
  if (x === 0) return 1;
  if (x === Number.POSITIVE_INFINITY) return 0;
  const logPrefix = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) break;
    }
    return Math.max(0, 1 - sum * Math.exp(logPrefix));
  }
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPSILON) break;
  }
  return Math.min(1, Math.exp(logPrefix) * h);
}

/** P(χ² ≥ statistic) for `degrees` degrees of freedom: Q(degrees/2, statistic/2). */
export function chiSquarePValue(statistic: number, degrees = HISTOGRAM_BUCKETS - 1): number {
  return upperRegularizedGamma(degrees / 2, statistic / 2);
}

/**
 * The expected return to player of one unit staked on `game`, as the contract pays: the outcome
 * is uniform on [0, r) (a Poseidon hash, a BN254 field element), the bet wins when
 * outcome % modulus < winBelow, and a win pays stake · multiplierBps / 10 000. The winning outcomes
 * are counted exactly: r = q·modulus + s holds q·winBelow + min(s, winBelow) of them. (The
 * contract rounds each payout down to the wei, which takes less than 1 wei per bet off this.)
 * 0 for a game the contract does not define.
 */
export function expectedRtp(game: string): number {
  if (!isGameId(game)) return 0;
  const { modulus, winBelow, multiplierBps } = GAMES[game];
  const q = FIELD_MODULUS / modulus;
  const s = FIELD_MODULUS % modulus;
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  const winning = q * winBelow + (s < winBelow ? s : winBelow);
  // winning · multiplier / (r · BPS), rounded to a double through 18 exact decimal digits.
  const SCALE = 10n ** 18n;
  return Number((winning * multiplierBps * SCALE) / (FIELD_MODULUS * BPS)) / Number(SCALE);
}

/** totalPayout / totalStake as a double; 0 when nothing was staked. */
export function ratio(numerator: bigint, denominator: bigint): number {
  if (denominator === 0n) return 0;
  const SCALE = 10n ** 18n;
  return Number((numerator * SCALE) / denominator) / Number(SCALE);
}
