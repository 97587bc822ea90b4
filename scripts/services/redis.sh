#!/usr/bin/env bash
# Starts and stops a private redis-server for tests and local runs.
#   redis.sh start DIR   start (or restart on the same port and AOF) a server whose files live in
#                        DIR/redis; binds 127.0.0.1 only, append-only file on, a random password;
#                        waits until it answers and writes DIR/redis.env:
#                          REDIS_URL=redis://default:PASS@127.0.0.1:PORT   (append /STREAM)
#                          REDIS_HOST, REDIS_PORT, REDIS_PASSWORD, REDIS_PID
#   redis.sh stop DIR    SIGTERM the server it started (it writes the AOF and exits), keep the data
#   redis.sh clean DIR   stop, then remove DIR/redis and DIR/redis.env
set -euo pipefail
. "$(dirname "$0")/common.sh"

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|clean DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data="$dir/redis"
pidfile="$data/redis.pid"

start() {
  command -v redis-server >/dev/null || { echo "redis.sh: redis-server not installed (run scripts/setup.sh)" >&2; exit 1; }
  mkdir -p "$data"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "redis.sh: already running (pid $(cat "$pidfile"))"; return 0
  fi
  # A restart keeps the port and the password, so clients reconnect to the same URL.
  [ -f "$data/password" ] || random_secret > "$data/password"
  local password; password=$(cat "$data/password")
  for attempt in 1 2 3 4 5; do
    local port
    if [ -f "$data/port" ]; then port=$(cat "$data/port"); else port=$(pick_free_port); fi
    cat > "$data/redis.conf" <<CONF
bind 127.0.0.1
protected-mode yes
port $port
dir $data
appendonly yes
appendfsync everysec
save ""
requirepass $password
daemonize no
logfile $data/redis.log
CONF
    redis-server "$data/redis.conf" </dev/null >/dev/null 2>&1 &
    local pid=$!
    echo "$pid" > "$pidfile"
    if wait_until 10 sh -c "REDISCLI_AUTH='$password' redis-cli -h 127.0.0.1 -p $port --no-auth-warning ping | grep -q PONG"; then
      echo "$port" > "$data/port"
      # While the AOF loads the server answers LOADING, not PONG, so the wait above covers it.
      cat > "$dir/redis.env" <<ENV
REDIS_URL=redis://default:$password@127.0.0.1:$port
REDIS_HOST=127.0.0.1
REDIS_PORT=$port
REDIS_PASSWORD=$password
REDIS_PID=$pid
ENV
      echo "redis.sh: redis-server pid $pid on 127.0.0.1:$port (data $data)"
      return 0
    fi
    stop_pidfile "$pidfile" KILL 1
    [ -f "$data/port" ] && { echo "redis.sh: could not restart on port $port; see $data/redis.log" >&2; exit 1; }
    echo "redis.sh: start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "redis.sh: could not start redis-server; see $data/redis.log" >&2
  exit 1
}

case "$cmd" in
  start) start ;;
  stop) stop_pidfile "$pidfile" TERM 20 ;;
  clean) stop_pidfile "$pidfile" TERM 20; rm -rf "$data" "$dir/redis.env" ;;
  *) echo "usage: $0 start|stop|clean DIR" >&2; exit 2 ;;
esac
