-- CreateTable
CREATE TABLE "PlayerBetCount" (
    "player" TEXT NOT NULL,
    "chainId" BIGINT NOT NULL,
    "status" "BetStatus" NOT NULL,
    "bets" BIGINT NOT NULL,

    CONSTRAINT "PlayerBetCount_pkey" PRIMARY KEY ("player","chainId","status")
);


-- Hand-written: "PlayerBetCount" is maintained by triggers on "Bet", so every writer (indexer
-- commits and reorg rollbacks, seeds, the scale generator, manual SQL) keeps it exact without
-- knowing about it. Statement-level triggers with transition tables: one upsert per
-- (player, chainId, status) a statement touches, not one per row, and the counter rows are locked
-- only from the end of the statement (when AFTER triggers run) to COMMIT. Rows are upserted in key
-- order so two transactions touching the same counters cannot deadlock on them. No CHECK (bets >= 0):
-- PostgreSQL checks it on the proposed INSERT row before ON CONFLICT turns it into an UPDATE, so a
-- negative delta would always fail it.
CREATE FUNCTION "player_bet_count_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "PlayerBetCount" AS c ("player", "chainId", "status", "bets")
    SELECT "player", "chainId", "status", count(*) FROM new_bets GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("player", "chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "PlayerBetCount" AS c ("player", "chainId", "status", "bets")
    SELECT "player", "chainId", "status", -count(*) FROM old_bets GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("player", "chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  ELSE
    -- UPDATE (also the DO UPDATE side of INSERT … ON CONFLICT): only keys whose count changes,
    -- so an update that keeps player, chainId and status writes nothing.
    INSERT INTO "PlayerBetCount" AS c ("player", "chainId", "status", "bets")
    SELECT "player", "chainId", "status", sum(delta) FROM (
      SELECT "player", "chainId", "status", 1 AS delta FROM new_bets
      UNION ALL
      SELECT "player", "chainId", "status", -1 FROM old_bets
    ) AS moved GROUP BY 1, 2, 3 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT ("player", "chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  END IF;
  RETURN NULL;
END;
$$;

-- Transition tables allow one event per trigger, hence three.
CREATE TRIGGER "Bet_player_bet_count_insert"
  AFTER INSERT ON "Bet" REFERENCING NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "player_bet_count_apply"();

CREATE TRIGGER "Bet_player_bet_count_update"
  AFTER UPDATE ON "Bet" REFERENCING OLD TABLE AS old_bets NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "player_bet_count_apply"();

CREATE TRIGGER "Bet_player_bet_count_delete"
  AFTER DELETE ON "Bet" REFERENCING OLD TABLE AS old_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "player_bet_count_apply"();

CREATE FUNCTION "player_bet_count_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE "PlayerBetCount";
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Bet_player_bet_count_truncate"
  AFTER TRUNCATE ON "Bet"
  FOR EACH STATEMENT EXECUTE FUNCTION "player_bet_count_truncate"();

-- Backfill. CREATE TRIGGER above locked "Bet" against writes until this migration commits, so no
-- write can fall between the count below and the triggers.
INSERT INTO "PlayerBetCount" ("player", "chainId", "status", "bets")
SELECT "player", "chainId", "status", count(*) FROM "Bet" GROUP BY 1, 2, 3;
