# Shared by the service scripts: free-port picking, waiting, and stopping by pid file.
# Sourced, not run.

# Prints a TCP port on 127.0.0.1 that nothing listens on right now (the service may still lose a
# race for it; the callers retry with another port when the start fails).
pick_free_port() {
  local port
  for _ in $(seq 1 200); do
    # Below the kernel's ephemeral range (32768-60999 by default): a service restarted on its port
    # (the outage tests stop one for 10 s and start it again on the same port) must not find it
    # taken meanwhile by some client's outgoing connection.
    port=$(( 20000 + RANDOM % 12000 ))
    if ! ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# wait_until SECONDS CMD...: runs CMD every 0.1 s until it succeeds or time runs out.
wait_until() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# stop_pidfile FILE SIGNAL SECONDS: sends SIGNAL to the pid in FILE (only if that process still
# runs), waits up to SECONDS for it to exit, then SIGKILLs it. Never touches any other process.
stop_pidfile() {
  local file=$1 sig=$2 secs=$3 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "-$sig" "$pid" 2>/dev/null || true
    local deadline=$(( $(date +%s) + secs ))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$(date +%s)" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; break; fi
      sleep 0.1
    done
  fi
  rm -f "$file"
}

random_secret() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# start_on_free_port NAME PIDFILE LOG LAUNCH READY: starts a server on a free 127.0.0.1 port,
# trying up to five ports, since another process may take a picked port before the server binds
# it. `LAUNCH PORT` starts the server in the background (its pid is $!); `READY PORT` succeeds once
# it answers. On success sets STARTED_PORT and STARTED_PID; after five failures it exits 1,
# naming LOG.
start_on_free_port() {
  local name=$1 pidfile=$2 log=$3 launch=$4 ready=$5 attempt port pid
  for attempt in 1 2 3 4 5; do
    port=$(pick_free_port)
    "$launch" "$port"
    pid=$!
    echo "$pid" > "$pidfile"
    if wait_until 20 "$ready" "$port"; then
      STARTED_PORT=$port STARTED_PID=$pid
      return 0
    fi
    stop_pidfile "$pidfile" KILL 1
    echo "${0##*/}: $name start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "${0##*/}: could not start $name; see $log" >&2
  exit 1
}
