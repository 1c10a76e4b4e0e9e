#!/bin/sh
# Run once by the postgres image on an empty data directory (/docker-entrypoint-initdb.d), after
# the roles: the replication role the `replica` profile's postgres-replica copies and streams the
# primary with (pg_basebackup -R), and the pg_hba.conf line that lets it in with a password.
set -eu
user="${DB_REPLICATION_USER:-bets_replicator}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v user="$user" -v password="$DB_REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE :"user" WITH REPLICATION LOGIN PASSWORD :'password';
SQL
echo "host replication $user all scram-sha-256" >> "$PGDATA/pg_hba.conf"
