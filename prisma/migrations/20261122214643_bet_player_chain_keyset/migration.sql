-- CreateIndex
CREATE INDEX "Bet_player_chainId_placedBlock_placedLogIndex_idx" ON "Bet"("player", "chainId", "placedBlock", "placedLogIndex");

