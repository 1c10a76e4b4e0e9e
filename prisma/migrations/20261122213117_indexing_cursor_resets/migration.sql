-- AlterTable
ALTER TABLE "IndexingCursor" ADD COLUMN     "resets" INTEGER NOT NULL DEFAULT 0;

