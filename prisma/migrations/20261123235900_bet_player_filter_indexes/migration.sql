-- CreateIndex
-- Hand-edited: IF NOT EXISTS. Migrations run in one transaction, so these CREATE INDEX statements
-- block writes to "Bet" while they build (minutes at tens of millions of bets). A large deployment
-- creates the indexes beforehand with the same statements plus CONCURRENTLY; this then does nothing.
CREATE INDEX IF NOT EXISTS "Bet_player_game_placedBlock_placedLogIndex_chainId_idx" ON "Bet"("player", "game", "placedBlock", "placedLogIndex", "chainId");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "Bet_player_placedAt_idx" ON "Bet"("player", "placedAt");
