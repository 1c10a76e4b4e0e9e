-- CreateTable
CREATE TABLE "SchemaUsageOperation" (
    "hash" TEXT NOT NULL,
    "name" TEXT,
    "document" TEXT NOT NULL,
    "firstSeen" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeen" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SchemaUsageOperation_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "SchemaUsageHourly" (
    "hour" TIMESTAMP(3) NOT NULL,
    "coordinate" TEXT NOT NULL,
    "operationHash" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "SchemaUsageHourly_pkey" PRIMARY KEY ("hour","coordinate","operationHash")
);

-- CreateIndex
CREATE INDEX "SchemaUsageHourly_coordinate_hour_idx" ON "SchemaUsageHourly"("coordinate", "hour");

-- The gateway records usage as bets_usage_writer (deploy/postgres/roles.sql): the usage tables
-- only, nothing else. Granted here because the tables are created after the roles; skipped where
-- the role does not exist (PGlite, a laptop's server).
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'bets_usage_writer') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON "SchemaUsageOperation", "SchemaUsageHourly" TO bets_usage_writer;
  END IF;
END
$$;
