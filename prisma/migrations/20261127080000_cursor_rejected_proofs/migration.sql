-- AlterTable
ALTER TABLE "IndexingCursor" ADD COLUMN     "rejectedProofs" INTEGER NOT NULL DEFAULT 0;
