-- CreateTable
CREATE TABLE "FairnessCounter" (
    "chainId" BIGINT NOT NULL,
    "game" TEXT NOT NULL,
    "settledBets" BIGINT NOT NULL,
    "wonBets" BIGINT NOT NULL,
    "refundedBets" BIGINT NOT NULL,
    "totalStake" DECIMAL(78,0) NOT NULL,
    "totalPayout" DECIMAL(78,0) NOT NULL,
    "outcomeHistogram" BIGINT[],

    CONSTRAINT "FairnessCounter_pkey" PRIMARY KEY ("chainId","game")
);


-- Hand-written: "FairnessCounter" is maintained by triggers on "Bet" and "BetResult", like
-- "PlayerBetCount" (migration *_player_bet_count), so every writer (indexer commits, reorg
-- rollbacks and resets, seeds, the scale generator, manual SQL) keeps it exact in the transaction
-- of its own write without knowing about it. What it holds, per (chainId, game):
--   settledBets, totalStake   the "Bet" rows with status SETTLED (count, sum of stake);
--   refundedBets              the "Bet" rows with status REFUNDED;
--   wonBets, totalPayout,     the "BetResult" rows, each under its bet's game: won ones, sum of
--   outcomeHistogram          payout, and 16 counts, element i (1-based i + 1) counting outcomes in
--                             [i·r/16, (i+1)·r/16), i = floor(16·outcome / r), r the BN254 scalar
--                             field order (an outcome ≥ r, which the verifier refuses, counts in none).
-- Every trigger turns its rows into signed "FairnessCounter"-shaped deltas and hands them to
-- fairness_counter_apply, which sums them per key and upserts in key order (no deadlock between
-- two writers), skipping keys whose delta is all zeros.

CREATE FUNCTION "fairness_histogram_one"(outcome numeric, sign bigint) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN outcome IS NULL OR outcome < 0 OR outcome >= 21888242871839275222246405745257275088548364400416034343698204186575808495617
      THEN array_fill(0::bigint, ARRAY[16])
    ELSE array_fill(0::bigint, ARRAY[div(16 * outcome, 21888242871839275222246405745257275088548364400416034343698204186575808495617)::int])
      || sign || array_fill(0::bigint, ARRAY[15 - div(16 * outcome, 21888242871839275222246405745257275088548364400416034343698204186575808495617)::int])
  END
$$;

CREATE FUNCTION "fairness_histogram_add"(a bigint[], b bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS u(x, y, i)
$$;

CREATE FUNCTION "fairness_counter_apply"(deltas "FairnessCounter"[]) RETURNS void LANGUAGE sql AS $$
  WITH d AS (SELECT * FROM unnest(deltas)),
  sums AS (
    SELECT "chainId", "game", sum("settledBets")::bigint AS s, sum("wonBets")::bigint AS w, sum("refundedBets")::bigint AS rf,
           sum("totalStake") AS st, sum("totalPayout") AS p
    FROM d GROUP BY 1, 2
  ),
  histograms AS (
    SELECT "chainId", "game", array_agg(n ORDER BY i) AS h FROM (
      SELECT d."chainId", d."game", e.i, sum(e.x)::bigint AS n
      FROM d, unnest(d."outcomeHistogram") WITH ORDINALITY AS e(x, i) GROUP BY 1, 2, 3
    ) AS per_bucket GROUP BY 1, 2
  )
  INSERT INTO "FairnessCounter" AS c ("chainId", "game", "settledBets", "wonBets", "refundedBets", "totalStake", "totalPayout", "outcomeHistogram")
  SELECT sums."chainId", sums."game", s, w, rf, st, p, h
  FROM sums JOIN histograms USING ("chainId", "game")
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

-- "Bet", statement level: the status counts of the rows written, old ones subtracted, new ones
-- added (an upsert that keeps status, stake and game adds nothing). A result counts under its
-- bet's game, so an UPDATE that changes a settled bet's game moves the result's counts with it.
CREATE FUNCTION "fairness_counter_bet"() RETURNS trigger LANGUAGE plpgsql AS $$
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
      FROM (SELECT n."chainId", n."betId", n."game", 1 AS sign FROM new_bets n JOIN old_bets o USING ("chainId", "betId") WHERE n."game" <> o."game"
            UNION ALL
            SELECT o."chainId", o."betId", o."game", -1 FROM new_bets n JOIN old_bets o USING ("chainId", "betId") WHERE n."game" <> o."game") AS moved
      JOIN "BetResult" r ON r."chainId" = moved."chainId" AND r."betId" = moved."betId"));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Bet_fairness_counter_insert"
  AFTER INSERT ON "Bet" REFERENCING NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_bet"();

CREATE TRIGGER "Bet_fairness_counter_update"
  AFTER UPDATE ON "Bet" REFERENCING OLD TABLE AS old_bets NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_bet"();

CREATE TRIGGER "Bet_fairness_counter_delete"
  AFTER DELETE ON "Bet" REFERENCING OLD TABLE AS old_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_bet"();

-- "BetResult", statement level: each result under the game of its bet, read from "Bet". A result
-- deleted by the cascade of its bet's DELETE finds no bet any more (the cascade runs after the
-- bet's row is gone) and counts nothing here: the row-level trigger below took it off first.
CREATE FUNCTION "fairness_counter_result"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW(r."chainId", b."game", 0, r.won::int, 0, 0, r.payout, "fairness_histogram_one"(r.outcome, 1))::"FairnessCounter"
      FROM new_results r JOIN "Bet" b ON b."chainId" = r."chainId" AND b."betId" = r."betId"));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW(r."chainId", b."game", 0, -r.won::int, 0, 0, -r.payout, "fairness_histogram_one"(r.outcome, -1))::"FairnessCounter"
      FROM old_results r JOIN "Bet" b ON b."chainId" = r."chainId" AND b."betId" = r."betId"));
  ELSE
    PERFORM "fairness_counter_apply"(ARRAY(
      SELECT ROW(r."chainId", b."game", 0, r.sign * r.won::int, 0, 0, r.sign * r.payout, "fairness_histogram_one"(r.outcome, r.sign))::"FairnessCounter"
      FROM (SELECT "chainId", "betId", won, payout, outcome, 1 AS sign FROM new_results
            UNION ALL SELECT "chainId", "betId", won, payout, outcome, -1 FROM old_results) AS r
      JOIN "Bet" b ON b."chainId" = r."chainId" AND b."betId" = r."betId"));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "BetResult_fairness_counter_insert"
  AFTER INSERT ON "BetResult" REFERENCING NEW TABLE AS new_results
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_result"();

CREATE TRIGGER "BetResult_fairness_counter_update"
  AFTER UPDATE ON "BetResult" REFERENCING OLD TABLE AS old_results NEW TABLE AS new_results
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_result"();

CREATE TRIGGER "BetResult_fairness_counter_delete"
  AFTER DELETE ON "BetResult" REFERENCING OLD TABLE AS old_results
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_result"();

-- A bet deleted with its result still there (the reorg rollback deletes bets placed above the
-- common ancestor, settled ones included, and lets the foreign key cascade to their results):
-- while the bet row still exists, take its result's counts off. Row level, but only DELETEs of
-- bets pay for it (one index probe of "BetResult" per bet, as the cascade itself does).
CREATE FUNCTION "fairness_counter_result_gone"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "fairness_counter_apply"(ARRAY(
    SELECT ROW(OLD."chainId", OLD."game", 0, -r.won::int, 0, 0, -r.payout, "fairness_histogram_one"(r.outcome, -1))::"FairnessCounter"
    FROM "BetResult" r WHERE r."chainId" = OLD."chainId" AND r."betId" = OLD."betId"))
  WHERE EXISTS (SELECT FROM "BetResult" r WHERE r."chainId" = OLD."chainId" AND r."betId" = OLD."betId");
  RETURN OLD;
END;
$$;

CREATE TRIGGER "Bet_fairness_counter_result_gone"
  BEFORE DELETE ON "Bet"
  FOR EACH ROW EXECUTE FUNCTION "fairness_counter_result_gone"();

-- The key of a result, or of a bet that has one, never changes (it is the chain's bet id): the
-- triggers above pair old and new rows by it, so such an UPDATE is refused instead of miscounted.
-- "UPDATE OF" fires only for statements that set a key column (the indexer's upserts do not).
CREATE FUNCTION "fairness_counter_key_fixed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW."chainId", NEW."betId") IS DISTINCT FROM (OLD."chainId", OLD."betId")
     AND (TG_TABLE_NAME = 'BetResult' OR EXISTS (SELECT FROM "BetResult" r WHERE r."chainId" = OLD."chainId" AND r."betId" = OLD."betId")) THEN
    RAISE EXCEPTION 'the key of a settled bet or of a result cannot change (fairness counters)' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "Bet_fairness_counter_key_fixed"
  BEFORE UPDATE OF "chainId", "betId" ON "Bet"
  FOR EACH ROW EXECUTE FUNCTION "fairness_counter_key_fixed"();

CREATE TRIGGER "BetResult_fairness_counter_key_fixed"
  BEFORE UPDATE OF "chainId", "betId" ON "BetResult"
  FOR EACH ROW EXECUTE FUNCTION "fairness_counter_key_fixed"();

-- TRUNCATE: of "Bet" (with CASCADE, results too) leaves nothing to count; of "BetResult" alone
-- leaves the status counts and clears what results contributed.
CREATE FUNCTION "fairness_counter_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'Bet' THEN
    TRUNCATE "FairnessCounter";
  ELSE
    UPDATE "FairnessCounter" SET "wonBets" = 0, "totalPayout" = 0, "outcomeHistogram" = array_fill(0::bigint, ARRAY[16]);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Bet_fairness_counter_truncate"
  AFTER TRUNCATE ON "Bet"
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_truncate"();

CREATE TRIGGER "BetResult_fairness_counter_truncate"
  AFTER TRUNCATE ON "BetResult"
  FOR EACH STATEMENT EXECUTE FUNCTION "fairness_counter_truncate"();

-- Backfill. CREATE TRIGGER above locked "Bet" and "BetResult" against writes until this migration
-- commits, so no write can fall between the count below and the triggers.
SELECT "fairness_counter_apply"(ARRAY(
  SELECT ROW("chainId", "game", (status = 'SETTLED')::int, 0, (status = 'REFUNDED')::int,
             CASE WHEN status = 'SETTLED' THEN stake ELSE 0 END, 0, array_fill(0::bigint, ARRAY[16]))::"FairnessCounter"
  FROM "Bet"
  UNION ALL
  SELECT ROW(r."chainId", b."game", 0, r.won::int, 0, 0, r.payout, "fairness_histogram_one"(r.outcome, 1))::"FairnessCounter"
  FROM "BetResult" r JOIN "Bet" b ON b."chainId" = r."chainId" AND b."betId" = r."betId"));
