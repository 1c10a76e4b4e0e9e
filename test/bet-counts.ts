import type { Database } from "../core/db.ts";

export interface BetCountDrift {
  player: string;
  chainId: string;
  status: string;
  /** COUNT(*) over "Bet". */
  counted: number;
  /** What "PlayerBetCount" says (0 when it has no row). */
  counter: number;
}

/**
 * Every (player, chainId, status) whose trigger-maintained counter differs from COUNT(*) over the
 * bets: a missing, stale or extra counter row; and every (chainId, status) of "BetCount" (player
 * "(every wallet)") likewise. Empty when the counters are exact.
 */
export async function betCountDrift(db: Database): Promise<BetCountDrift[]> {
  return db.prisma.$queryRaw<BetCountDrift[]>`
    SELECT player, "chainId"::text AS "chainId", status::text AS status,
           coalesce(b.n, 0)::int AS counted, coalesce(c.bets, 0)::int AS counter
    FROM (SELECT player, "chainId", status, count(*) AS n FROM "Bet" GROUP BY 1, 2, 3) AS b
    FULL JOIN "PlayerBetCount" AS c USING (player, "chainId", status)
    WHERE coalesce(b.n, 0) <> coalesce(c.bets, 0)
    UNION ALL
    SELECT '(every wallet)', "chainId"::text, status::text, coalesce(b.n, 0)::int, coalesce(c.bets, 0)::int
    FROM (SELECT "chainId", status, count(*) AS n FROM "Bet" GROUP BY 1, 2) AS b
    FULL JOIN "BetCount" AS c USING ("chainId", status)
    WHERE coalesce(b.n, 0) <> coalesce(c.bets, 0)
    ORDER BY 1, 2, 3`;
}
