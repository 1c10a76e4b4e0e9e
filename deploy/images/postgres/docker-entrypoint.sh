#!/bin/sh
# What the official postgres image's entry point does, for the compose file's use: as root, make
# PGDATA the postgres user's and re-run as it; on an empty PGDATA, initdb with POSTGRES_USER and
# POSTGRES_PASSWORD (scram-sha-256 for every TCP client), create POSTGRES_DB, run the
# /docker-entrypoint-initdb.d scripts (*.sh sourced-by-sh, *.sql through psql) on a server that
# listens on its socket only; then exec the command. The port is PGPORT's (default 5432), which
# postgres, psql and pg_isready all read.
set -eu
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups /bin/sh "$0" "$@"
fi
if [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  export POSTGRES_USER="${POSTGRES_USER:-postgres}" POSTGRES_DB="${POSTGRES_DB:-${POSTGRES_USER:-postgres}}"
  passwordFile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$passwordFile"
  initdb --username="$POSTGRES_USER" --pwfile="$passwordFile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$passwordFile"
  printf '\nhost all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v db="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"db";
SQL
  fi
  for script in /docker-entrypoint-initdb.d/*; do
    case "$script" in
      *.sh) echo "initdb: running $script"; PGHOST=/var/run/postgresql sh "$script" ;;
      *.sql) echo "initdb: running $script"; psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$script" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "initdb: done"
fi
# Listen on every address of the container's network: in compose's host-network override, the
# override's command narrows it to loopback.
if [ "$1" = postgres ]; then shift; set -- postgres -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql "$@"; fi
exec "$@"
