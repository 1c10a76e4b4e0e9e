#!/bin/sh
# Run once by the postgres image on an empty data directory (/docker-entrypoint-initdb.d):
# creates the migrator, writer and reader roles of deploy/postgres/roles.sql in POSTGRES_DB.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v migrator="${DB_MIGRATOR_USER:-bets_migrator}" -v migrator_password="$DB_MIGRATOR_PASSWORD" \
  -v writer="${DB_WRITER_USER:-bets_writer}" -v writer_password="$DB_WRITER_PASSWORD" \
  -v reader="${DB_READER_USER:-bets_reader}" -v reader_password="$DB_READER_PASSWORD" \
  -v usage_writer_password="${DB_USAGE_WRITER_PASSWORD:-$DB_WRITER_PASSWORD}" \
  -f /etc/bet-results/roles.sql
