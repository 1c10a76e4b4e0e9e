-- AlterEnum
ALTER TYPE "BetUpdateType" ADD VALUE 'FINALIZED';

-- AlterTable
ALTER TABLE "Bet" ADD COLUMN     "finalizedUpdateBlock" BIGINT;

-- Hand-written: bets already final when this migration runs are marked as announced, so the first
-- head advance after the upgrade does not send a FINALIZED update for the whole history at once
-- (FINALIZED exists from this release on; older results were final before it did).
UPDATE "Bet" AS b SET "finalizedUpdateBlock" = b."lastChangeBlock"
FROM "IndexingCursor" AS c
WHERE c."chainId" = b."chainId" AND b.status <> 'PENDING' AND b."lastChangeBlock" <= c."finalizedBlock";

-- CreateIndex
CREATE INDEX "Bet_finalized_pending_idx" ON "Bet"("chainId", "lastChangeBlock") WHERE ("finalizedUpdateBlock" IS NULL AND status <> 'PENDING');
