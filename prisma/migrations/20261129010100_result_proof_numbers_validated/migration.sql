-- The rows written before the previous migration, checked in a transaction of their own: VALIDATE
-- CONSTRAINT takes a SHARE UPDATE EXCLUSIVE lock, so the service keeps reading and the indexer
-- keeps writing while it scans. A row it refuses fails this migration (and the start) with the
-- constraint's name; no writer of this service stores one.
ALTER TABLE "BetResult" VALIDATE CONSTRAINT "BetResult_proof_numbers_canonical";
