#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the integration suite's run on the PostgreSQL store.
#
#   bash tests/postgres/cluster.sh start DIR   creates and starts a cluster in DIR, on a free
#                                              loopback port; prints the URL of a role that
#                                              may create databases (each test makes its own)
#   bash tests/postgres/cluster.sh stop DIR    stops it (DIR can then be removed)
#
# Debian's server binaries (/usr/lib/postgresql/N/bin, the newest N). The server refuses to
# run as root, so as root the cluster is made and run as the `postgres` user. The role's
# password is random, kept in DIR/url (mode 600); the URL goes to stdout only.
set -euo pipefail

command=${1:?start or stop}
dir=${2:?the directory of the cluster}
bin="$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -n 1 || true)"
if [ -z "$bin" ]; then
  echo "error: no PostgreSQL server under /usr/lib/postgresql (Debian: apt-get install postgresql)" >&2
  exit 1
fi
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres "$dir"
    runuser -u postgres -- test -w "$dir" || {
      echo "error: the postgres user cannot reach $dir (a parent directory is private)" >&2
      exit 1
    }
  fi
  port="$(free_port)"
  password="$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
  # The superuser trusts only the local socket in DIR; the test role logs in over TCP with
  # its password (scram), as a hub would.
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o \
    "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300" >/dev/null
  as_owner "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
    -c "CREATE ROLE baton LOGIN CREATEDB PASSWORD '$password'" \
    -c "CREATE DATABASE baton OWNER baton" >/dev/null
  url="postgres://baton:$password@127.0.0.1:$port/baton?sslmode=disable"
  (umask 077; echo "$url" >"$dir/url")
  echo "$url"
  ;;
stop)
  [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  ;;
*)
  echo "error: $command: start or stop" >&2
  exit 2
  ;;
esac
