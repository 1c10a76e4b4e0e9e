-- Hand-edited: IF NOT EXISTS on every index. Migrations run in one transaction, so these CREATE
-- INDEX statements block writes to "Bet" while they build (minutes at tens of millions of bets). A
-- large deployment creates the indexes beforehand with the same statements plus CONCURRENTLY; this
-- then does nothing.

-- DropIndex: its columns lead the (player, placedAt, chainId, betId) index below, which serves
-- every query it served.
DROP INDEX IF EXISTS "Bet_player_placedAt_idx";

-- CreateTable
CREATE TABLE "BetCount" (
    "chainId" BIGINT NOT NULL,
    "status" "BetStatus" NOT NULL,
    "bets" BIGINT NOT NULL,

    CONSTRAINT "BetCount_pkey" PRIMARY KEY ("chainId","status")
);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_player_placedAt_chainId_betId_idx" ON "Bet"("player", "placedAt", "chainId", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_placedAt_chainId_betId_idx" ON "Bet"("placedAt", "chainId", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_chainId_placedAt_betId_idx" ON "Bet"("chainId", "placedAt", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_status_placedAt_chainId_betId_idx" ON "Bet"("status", "placedAt", "chainId", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_game_placedAt_chainId_betId_idx" ON "Bet"("game", "placedAt", "chainId", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_token_placedAt_chainId_betId_idx" ON "Bet"("token", "placedAt", "chainId", "betId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_placedTx_idx" ON "Bet"("placedTx");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_settledTx_idx" ON "Bet"("settledTx") WHERE ("settledTx" IS NOT NULL);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_refundedTx_idx" ON "Bet"("refundedTx") WHERE ("refundedTx" IS NOT NULL);

-- Hand-written: "BetCount" is maintained by triggers on "Bet" exactly as "PlayerBetCount" is
-- (see the migration `*_player_bet_count` for why statement-level triggers with transition tables,
-- upserts in key order, and no CHECK). One indexer writes each network, so its rows see no
-- contention between networks.
CREATE FUNCTION "bet_count_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "BetCount" AS c ("chainId", "status", "bets")
    SELECT "chainId", "status", count(*) FROM new_bets GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "BetCount" AS c ("chainId", "status", "bets")
    SELECT "chainId", "status", -count(*) FROM old_bets GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  ELSE
    INSERT INTO "BetCount" AS c ("chainId", "status", "bets")
    SELECT "chainId", "status", sum(delta) FROM (
      SELECT "chainId", "status", 1 AS delta FROM new_bets
      UNION ALL
      SELECT "chainId", "status", -1 FROM old_bets
    ) AS moved GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
    ON CONFLICT ("chainId", "status") DO UPDATE SET "bets" = c."bets" + EXCLUDED."bets";
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Bet_bet_count_insert"
  AFTER INSERT ON "Bet" REFERENCING NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "bet_count_apply"();

CREATE TRIGGER "Bet_bet_count_update"
  AFTER UPDATE ON "Bet" REFERENCING OLD TABLE AS old_bets NEW TABLE AS new_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "bet_count_apply"();

CREATE TRIGGER "Bet_bet_count_delete"
  AFTER DELETE ON "Bet" REFERENCING OLD TABLE AS old_bets
  FOR EACH STATEMENT EXECUTE FUNCTION "bet_count_apply"();

CREATE FUNCTION "bet_count_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE "BetCount";
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Bet_bet_count_truncate"
  AFTER TRUNCATE ON "Bet"
  FOR EACH STATEMENT EXECUTE FUNCTION "bet_count_truncate"();

-- Backfill: CREATE TRIGGER above locked "Bet" against writes until this migration commits.
INSERT INTO "BetCount" ("chainId", "status", "bets")
SELECT "chainId", "status", count(*) FROM "Bet" GROUP BY 1, 2;
