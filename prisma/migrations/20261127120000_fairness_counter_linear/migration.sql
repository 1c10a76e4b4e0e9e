-- Hand-written (no schema change): the "FairnessCounter" triggers of *_fairness_counters, made
-- linear in the rows a statement writes whatever plan a session has cached (issue 24).
--
-- A PL/pgSQL function plans each statement once per session and keeps the plan; a statement over
-- transition tables is planned with the row counts they held that first time. The indexer's first
-- commit fires the "Bet" UPDATE triggers with empty transition tables (its upsert updates nothing,
-- its head advance claims nothing), so the UPDATE branch's `new_bets JOIN old_bets` (the bets whose
-- game changed) was cached as a nested loop: the next big commit rescanned one transition table,
-- spilled to a temp file, once per row of the other (4,200 refunds: 11 s; marking 4,200 bets final:
-- 23 s). The bets whose game changed are now found by grouping both tables' rows by (key, game):
-- an unchanged game sums to zero and drops out, so no plan is worse than a sort.
--
-- fairness_counter_apply summed the 16 histogram buckets of every delta, all-zero ones included
-- (every "Bet" status change): 16 rows per bet sorted per statement. Only deltas with a non-zero
-- histogram (results) are unnested now; a key without one adds zeros.

CREATE OR REPLACE FUNCTION "fairness_counter_apply"(deltas "FairnessCounter"[]) RETURNS void LANGUAGE sql AS $$
  WITH d AS (SELECT * FROM unnest(deltas)),
  sums AS (
    SELECT "chainId", "game", sum("settledBets")::bigint AS s, sum("wonBets")::bigint AS w, sum("refundedBets")::bigint AS rf,
           sum("totalStake") AS st, sum("totalPayout") AS p
    FROM d GROUP BY 1, 2
  ),
  histograms AS (
    SELECT "chainId", "game", array_agg(n ORDER BY i) AS h FROM (
      SELECT d."chainId", d."game", e.i, sum(e.x)::bigint AS n
      FROM d, unnest(d."outcomeHistogram") WITH ORDINALITY AS e(x, i)
      WHERE d."outcomeHistogram" <> array_fill(0::bigint, ARRAY[16])
      GROUP BY 1, 2, 3
    ) AS per_bucket GROUP BY 1, 2
  ),
  totals AS (
    SELECT sums."chainId", sums."game", s, w, rf, st, p, coalesce(h, array_fill(0::bigint, ARRAY[16])) AS h
    FROM sums LEFT JOIN histograms USING ("chainId", "game")
  )
  INSERT INTO "FairnessCounter" AS c ("chainId", "game", "settledBets", "wonBets", "refundedBets", "totalStake", "totalPayout", "outcomeHistogram")
  SELECT "chainId", "game", s, w, rf, st, p, h
  FROM totals
  WHERE s <> 0 OR w <> 0 OR rf <> 0 OR st <> 0 OR p <> 0 OR h <> array_fill(0::bigint, ARRAY[16])
  ORDER BY 1, 2
  ON CONFLICT ("chainId", "game") DO UPDATE SET
    "settledBets" = c."settledBets" + EXCLUDED."settledBets",
    "wonBets" = c."wonBets" + EXCLUDED."wonBets",
    "refundedBets" = c."refundedBets" + EXCLUDED."refundedBets",
    "totalStake" = c."totalStake" + EXCLUDED."totalStake",
    "totalPayout" = c."totalPayout" + EXCLUDED."totalPayout",
    "outcomeHistogram" = "fairness_histogram_add"(c."outcomeHistogram", EXCLUDED."outcomeHistogram")
$$;

-- As before except the UPDATE branch's second part: a bet whose game changed contributes its old
-- (key, game) with -1 and its new one with +1; a bet whose game did not change sums to zero there.
-- The key of a bet that has a result never changes ("Bet_fairness_counter_key_fixed"), so a key
-- joined to "BetResult" below has exactly one old and one new row, as the join it replaces paired.
CREATE OR REPLACE FUNCTION "fairness_counter_bet"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW("chainId", "game", (status = 'SETTLED')::int, 0, (status = 'REFUNDED')::int,
                 CASE WHEN status = 'SETTLED' THEN stake ELSE 0 END, 0, array_fill(0::bigint, ARRAY[16]))::"FairnessCounter"
      FROM new_bets));
  ELSIF TG_OP = 'DELETE' THEN
    -- The deleted bets' results were subtracted by "Bet_fairness_counter_result_gone" (row level).
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW("chainId", "game", -(status = 'SETTLED')::int, 0, -(status = 'REFUNDED')::int,
                 CASE WHEN status = 'SETTLED' THEN -stake ELSE 0 END, 0, array_fill(0::bigint, ARRAY[16]))::"FairnessCounter"
      FROM old_bets));
  ELSE
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW("chainId", "game", sign * (status = 'SETTLED')::int, 0, sign * (status = 'REFUNDED')::int,
                 CASE WHEN status = 'SETTLED' THEN sign * stake ELSE 0 END, 0, array_fill(0::bigint, ARRAY[16]))::"FairnessCounter"
      FROM (SELECT "chainId", "game", status, stake, 1 AS sign FROM new_bets
            UNION ALL SELECT "chainId", "game", status, stake, -1 FROM old_bets) AS moved
      UNION ALL
      SELECT ROW(r."chainId", moved."game", 0, moved.sign * r.won::int, 0, 0, moved.sign * r.payout,
                 "fairness_histogram_one"(r.outcome, moved.sign))::"FairnessCounter"
      FROM (SELECT "chainId", "betId", "game", sum(sign)::int AS sign
            FROM (SELECT "chainId", "betId", "game", 1 AS sign FROM new_bets
                  UNION ALL SELECT "chainId", "betId", "game", -1 FROM old_bets) AS versions
            GROUP BY 1, 2, 3 HAVING sum(sign) <> 0) AS moved
      JOIN "BetResult" r ON r."chainId" = moved."chainId" AND r."betId" = moved."betId"));
  END IF;
  RETURN NULL;
END;
$$;
