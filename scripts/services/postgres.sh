#!/usr/bin/env bash
# Starts and stops a private PostgreSQL 15 for tests and local runs.
#   postgres.sh start DIR   initdb (first time) into a temporary folder, start the server on a free
#                           port of 127.0.0.1 (TCP only, scram-sha-256 password), create database
#                           `overhead`, and write DIR/postgres.env:
#                             PG_URL=postgres://overhead:PASS@127.0.0.1:PORT/overhead
#                             PG_HOST, PG_PORT, PG_USER, PG_PASSWORD, PG_DB, PG_PID
#                           A second start after stop reuses the data and the port.
#   postgres.sh stop DIR    fast shutdown of the server it started; keeps the data
#   postgres.sh clean DIR   stop, then remove the data folder and DIR/postgres.env
# PostgreSQL refuses to run as root, and CI runs as root: then the server runs as `nobody`, with
# its data in a temporary folder that user owns.
set -euo pipefail
. "$(dirname "$0")/common.sh"

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|clean DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
state="$dir/postgres"          # what we own here: the data path, port, password, pid
mkdir -p "$state"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

# The command prefix that runs a program as the data folder's owner. setpriv execs in place (no
# extra process), so the pid of a backgrounded server is the postmaster itself.
AS_OWNER=()
[ "$(id -u)" = 0 ] && AS_OWNER=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)

start() {
  [ -x "$PGBIN/postgres" ] || { echo "postgres.sh: PostgreSQL not installed (run scripts/setup.sh)" >&2; exit 1; }
  if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
    echo "postgres.sh: already running (pid $(cat "$state/pid"))"; return 0
  fi
  local data
  if [ -f "$state/data_path" ] && [ -d "$(cat "$state/data_path")" ]; then
    data=$(cat "$state/data_path")
  else
    data=$(mktemp -d /tmp/overhead-pg.XXXXXX)
    chmod 700 "$data"
    [ "$(id -u)" = 0 ] && chown nobody "$data"
    random_secret > "$state/password"
    local pwfile="$data.pw"
    cat "$state/password" > "$pwfile"
    [ "$(id -u)" = 0 ] && chown nobody "$pwfile"
    "${AS_OWNER[@]}" "$PGBIN/initdb" -D "$data/db" -U overhead --pwfile="$pwfile" --auth-host=scram-sha-256 \
      --auth-local=reject -E UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 ||
      { rm -f "$pwfile"; echo "postgres.sh: initdb failed; see $state/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
    echo "$data" > "$state/data_path"
  fi
  local password; password=$(cat "$state/password")
  for attempt in 1 2 3 4 5; do
    local port
    if [ -f "$state/port" ]; then port=$(cat "$state/port"); else port=$(pick_free_port); fi
    # TCP on 127.0.0.1 only, no Unix socket (nothing to clean up, nothing shared).
    "${AS_OWNER[@]}" "$PGBIN/postgres" -D "$data/db" -h 127.0.0.1 -p "$port" -k "" -c fsync=on \
      -c max_connections=100 -c shared_buffers=64MB >"$data/server.log" 2>&1 </dev/null &
    local pid=$!
    echo "$pid" > "$state/pid"
    if wait_until 20 env PGPASSWORD="$password" "$PGBIN/psql" -h 127.0.0.1 -p "$port" -U overhead -d postgres -Atqc 'select 1'; then
      echo "$port" > "$state/port"
      if ! PGPASSWORD="$password" "$PGBIN/psql" -h 127.0.0.1 -p "$port" -U overhead -d postgres -Atqc \
          "select 1 from pg_database where datname='overhead'" | grep -q 1; then
        PGPASSWORD="$password" "$PGBIN/psql" -h 127.0.0.1 -p "$port" -U overhead -d postgres -qc 'create database overhead' >/dev/null
      fi
      cat > "$dir/postgres.env" <<ENV
PG_URL=postgres://overhead:$password@127.0.0.1:$port/overhead
PG_HOST=127.0.0.1
PG_PORT=$port
PG_USER=overhead
PG_PASSWORD=$password
PG_DB=overhead
PG_PID=$pid
ENV
      echo "postgres.sh: postgres pid $pid on 127.0.0.1:$port (data $data)"
      return 0
    fi
    stop_pidfile "$state/pid" KILL 1
    [ -f "$state/port" ] && { echo "postgres.sh: could not restart on port $port; see $data/server.log" >&2; exit 1; }
    echo "postgres.sh: start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "postgres.sh: could not start postgres; see $data/server.log" >&2
  exit 1
}

# SIGINT = PostgreSQL's "fast" shutdown: ends sessions, checkpoints, exits.
stop() { stop_pidfile "$state/pid" INT 30; }

case "$cmd" in
  start) start ;;
  stop) stop ;;
  clean)
    stop
    if [ -f "$state/data_path" ]; then
      data=$(cat "$state/data_path")
      case "$data" in /tmp/overhead-pg.*) rm -rf "$data" ;; esac
    fi
    rm -rf "$state" "$dir/postgres.env" ;;
  *) echo "usage: $0 start|stop|clean DIR" >&2; exit 2 ;;
esac
