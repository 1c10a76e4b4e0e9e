-- CreateIndex
-- Hand-edited: IF NOT EXISTS. Migrations run in one transaction, so this CREATE INDEX blocks
-- writes to "Bet" while it builds (minutes at tens of millions of bets). A large deployment
-- creates the index beforehand with the same statement plus CONCURRENTLY; this then does nothing.
CREATE INDEX IF NOT EXISTS "Bet_player_status_placedBlock_placedLogIndex_chainId_idx" ON "Bet"("player", "status", "placedBlock", "placedLogIndex", "chainId");

