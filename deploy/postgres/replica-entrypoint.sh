#!/bin/sh
# Entry point of the `replica` profile's postgres-replica (the official postgres image, run as the
# postgres user): on an empty volume, copy the primary with pg_basebackup -R (which writes
# standby.signal and primary_conninfo, so the copy starts as a streaming hot standby), then run
# the command (postgres). Later starts resume streaming from where the volume stopped.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -q; do sleep 1; done
  PGPASSWORD="$REPLICATION_PASSWORD" pg_basebackup -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -U "$REPLICATION_USER" -D "$PGDATA" -R -X stream
fi
# The image's data directory is world-writable; PostgreSQL starts only on 0700/0750.
chmod 0700 "$PGDATA"
exec "$@"
