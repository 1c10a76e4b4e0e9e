-- CreateIndex
CREATE INDEX "Bet_player_status_placedBlock_placedLogIndex_chainId_idx" ON "Bet"("player", "status", "placedBlock", "placedLogIndex", "chainId");

