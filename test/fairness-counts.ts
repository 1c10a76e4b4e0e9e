import type { Database } from "../core/db.ts";

export interface FairnessDrift {
  chainId: string;
  game: string;
  /** The recount over "Bet" and "BetResult", as JSON text (zeros when nothing is counted). */
  counted: string;
  /** What "FairnessCounter" holds, as JSON text (zeros when it has no row). */
  counter: string;
}

/** The recount-versus-counter comparison of fairnessDrift, as plain SQL (for raw clients too). */
export const FAIRNESS_DRIFT_SQL = `
    WITH r AS (SELECT 21888242871839275222246405745257275088548364400416034343698204186575808495617::numeric AS r),
    bets AS (
      SELECT "chainId", game, count(*) FILTER (WHERE status = 'SETTLED') AS settled, count(*) FILTER (WHERE status = 'REFUNDED') AS refunded,
             coalesce(sum(stake) FILTER (WHERE status = 'SETTLED'), 0) AS stake
      FROM "Bet" GROUP BY 1, 2
    ),
    results AS (
      SELECT b."chainId", b.game, count(*) FILTER (WHERE x.won) AS won, sum(x.payout) AS payout
      FROM "BetResult" x JOIN "Bet" b USING ("chainId", "betId") GROUP BY 1, 2
    ),
    buckets AS (
      SELECT b."chainId", b.game, (16 * x.outcome - mod(16 * x.outcome, (SELECT r FROM r))) / (SELECT r FROM r) AS bucket, count(*) AS n
      FROM "BetResult" x JOIN "Bet" b USING ("chainId", "betId") WHERE x.outcome < (SELECT r FROM r) GROUP BY 1, 2, 3
    ),
    histograms AS (
      SELECT k."chainId", k.game, array_agg(coalesce(buckets.n, 0) ORDER BY i) AS h
      FROM (SELECT DISTINCT "chainId", game FROM buckets) AS k CROSS JOIN generate_series(0, 15) AS i
      LEFT JOIN buckets ON buckets."chainId" = k."chainId" AND buckets.game = k.game AND buckets.bucket = i
      GROUP BY 1, 2
    ),
    recount AS (
      SELECT "chainId", game, coalesce(bets.settled, 0) AS settled, coalesce(results.won, 0) AS won, coalesce(bets.refunded, 0) AS refunded,
             coalesce(bets.stake, 0) AS stake, coalesce(results.payout, 0) AS payout,
             coalesce(histograms.h, array_fill(0::bigint, ARRAY[16])) AS h
      FROM bets FULL JOIN results USING ("chainId", game) FULL JOIN histograms USING ("chainId", game)
    ),
    both_sides AS (
      SELECT "chainId", game,
        json_build_array(coalesce(x.settled, 0), coalesce(x.won, 0), coalesce(x.refunded, 0), coalesce(x.stake, 0)::text, coalesce(x.payout, 0)::text,
                         coalesce(x.h, array_fill(0::bigint, ARRAY[16])))::text AS counted,
        json_build_array(coalesce(c."settledBets", 0), coalesce(c."wonBets", 0), coalesce(c."refundedBets", 0), coalesce(c."totalStake", 0)::text,
                         coalesce(c."totalPayout", 0)::text, coalesce(c."outcomeHistogram", array_fill(0::bigint, ARRAY[16])))::text AS counter
      FROM recount AS x FULL JOIN "FairnessCounter" AS c USING ("chainId", game)
    )
    SELECT "chainId"::text AS "chainId", game, counted, counter FROM both_sides WHERE counted <> counter ORDER BY 1, 2`;

/**
 * Every (chainId, game) whose trigger-maintained fairness counters differ from a recount over the
 * rows: status counts and stake from "Bet", won / payout / histogram from "BetResult" under its
 * bet's game, bucket = floor(16·outcome / r) computed here on its own, in exact integer arithmetic (not
 * with the migration's functions). Empty when the counters are exact.
 */
export async function fairnessDrift(db: Database): Promise<FairnessDrift[]> {
  return db.prisma.$queryRawUnsafe<FairnessDrift[]>(FAIRNESS_DRIFT_SQL);
}
