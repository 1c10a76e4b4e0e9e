-- CreateEnum
CREATE TYPE "BetStatus" AS ENUM ('PENDING', 'SETTLED', 'REFUNDED');

-- CreateEnum
CREATE TYPE "BetUpdateType" AS ENUM ('PLACED', 'SETTLED', 'REFUNDED', 'REMOVED');

-- CreateTable
CREATE TABLE "Network" (
    "chainId" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "confirmations" INTEGER NOT NULL,
    "verificationKeyJson" TEXT NOT NULL,
    "verificationKeySha256" TEXT NOT NULL,

    CONSTRAINT "Network_pkey" PRIMARY KEY ("chainId")
);

-- CreateTable
CREATE TABLE "Contract" (
    "chainId" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "deployBlock" BIGINT NOT NULL,

    CONSTRAINT "Contract_pkey" PRIMARY KEY ("chainId","name")
);

-- CreateTable
CREATE TABLE "IndexingCursor" (
    "chainId" BIGINT NOT NULL,
    "indexedBlock" BIGINT NOT NULL,
    "indexedBlockHash" TEXT NOT NULL,
    "headBlock" BIGINT NOT NULL,
    "finalizedBlock" BIGINT NOT NULL,
    "isReady" BOOLEAN NOT NULL DEFAULT false,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "IndexingCursor_pkey" PRIMARY KEY ("chainId")
);

-- CreateTable
CREATE TABLE "Bet" (
    "chainId" BIGINT NOT NULL,
    "betId" DECIMAL(78,0) NOT NULL,
    "player" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "stake" DECIMAL(78,0) NOT NULL,
    "game" TEXT NOT NULL,
    "clientSeed" TEXT NOT NULL,
    "serverSeedHash" TEXT NOT NULL,
    "status" "BetStatus" NOT NULL,
    "placedBlock" BIGINT NOT NULL,
    "placedLogIndex" INTEGER NOT NULL,
    "placedBlockHash" TEXT NOT NULL,
    "placedTx" TEXT NOT NULL,
    "placedAt" BIGINT NOT NULL,
    "settledBlock" BIGINT,
    "settledBlockHash" TEXT,
    "settledTx" TEXT,
    "settledAt" BIGINT,
    "refundedBlock" BIGINT,
    "refundedBlockHash" TEXT,
    "refundedTx" TEXT,
    "refundedAt" BIGINT,
    "lastChangeBlock" BIGINT NOT NULL,

    CONSTRAINT "Bet_pkey" PRIMARY KEY ("chainId","betId")
);

-- CreateTable
CREATE TABLE "BetResult" (
    "chainId" BIGINT NOT NULL,
    "betId" DECIMAL(78,0) NOT NULL,
    "outcome" DECIMAL(78,0) NOT NULL,
    "won" BOOLEAN NOT NULL,
    "payout" DECIMAL(78,0) NOT NULL,
    "proof" JSONB NOT NULL,
    "publicSignals" TEXT[],
    "solidityCalldata" TEXT NOT NULL,
    "verified" BOOLEAN NOT NULL,

    CONSTRAINT "BetResult_pkey" PRIMARY KEY ("chainId","betId")
);

-- CreateTable
CREATE TABLE "BetUpdate" (
    "seq" BIGSERIAL NOT NULL,
    "chainId" BIGINT NOT NULL,
    "betId" DECIMAL(78,0) NOT NULL,
    "type" "BetUpdateType" NOT NULL,
    "player" TEXT NOT NULL,
    "blockNumber" BIGINT NOT NULL,
    "blockHash" TEXT NOT NULL,
    "bet" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BetUpdate_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "Network_name_key" ON "Network"("name");

-- CreateIndex
CREATE INDEX "Bet_player_placedBlock_placedLogIndex_chainId_idx" ON "Bet"("player", "placedBlock", "placedLogIndex", "chainId");

-- CreateIndex
CREATE INDEX "Bet_pending_player_chainId_idx" ON "Bet"("player", "chainId") WHERE (status = 'PENDING');

-- CreateIndex
CREATE INDEX "Bet_chainId_lastChangeBlock_idx" ON "Bet"("chainId", "lastChangeBlock");

-- CreateIndex
CREATE INDEX "BetUpdate_player_seq_idx" ON "BetUpdate"("player", "seq");

-- CreateIndex
CREATE INDEX "BetUpdate_chainId_betId_seq_idx" ON "BetUpdate"("chainId", "betId", "seq");

-- CreateIndex
CREATE INDEX "BetUpdate_chainId_blockNumber_idx" ON "BetUpdate"("chainId", "blockNumber");

-- AddForeignKey
ALTER TABLE "Contract" ADD CONSTRAINT "Contract_chainId_fkey" FOREIGN KEY ("chainId") REFERENCES "Network"("chainId") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IndexingCursor" ADD CONSTRAINT "IndexingCursor_chainId_fkey" FOREIGN KEY ("chainId") REFERENCES "Network"("chainId") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Bet" ADD CONSTRAINT "Bet_chainId_fkey" FOREIGN KEY ("chainId") REFERENCES "Network"("chainId") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BetResult" ADD CONSTRAINT "BetResult_chainId_betId_fkey" FOREIGN KEY ("chainId", "betId") REFERENCES "Bet"("chainId", "betId") ON DELETE CASCADE ON UPDATE CASCADE;
