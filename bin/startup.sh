#!/usr/bin/env bash
# Starts canal-server in the background.
#
#   bin/startup.sh [CONF_DIR]
#
# CONF_DIR (default: conf/ beside this bin/) holds canal.properties. Logs go
# to logs/ beside bin/ (CANAL_LOGS_DIR overrides): logs/canal/canal.log for the
# server, logs/<dest>/<dest>.log per destination, and
# logs/canal/canal_stdout.log for anything printed. The pid is written to
# bin/canal.pid; bin/stop.sh stops the server.
#
# The program: $CANAL_SERVER_BIN when set, else bin/canal-server (an install),
# else build/bin/canal-server (a source checkout).
#
# Refuses to start a second server while the one in bin/canal.pid runs. Waits
# up to CANAL_START_WAIT seconds (default 15) for the server to report that it
# started; on failure prints the last lines of its logs and exits 1.
set -u

bin_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$bin_dir")
pid_file="$bin_dir/canal.pid"
wait_s=${CANAL_START_WAIT:-15}

say() { echo "startup.sh: $*"; }

# shellcheck source=bin/canal-common.sh
. "$bin_dir/canal-common.sh"

conf=${1:-$root/conf}
if [ ! -f "$conf/canal.properties" ]; then
  say "no canal.properties in $conf (give the folder holding it: bin/startup.sh CONF_DIR)"
  exit 1
fi
conf=$(cd "$conf" && pwd)
logs=${CANAL_LOGS_DIR:-$root/logs}

server=${CANAL_SERVER_BIN:-}
if [ -z "$server" ]; then
  for candidate in "$bin_dir/canal-server" "$root/build/bin/canal-server"; do
    if [ -x "$candidate" ]; then server=$candidate; break; fi
  done
fi
if [ -z "$server" ] || [ ! -x "$server" ]; then
  say "canal-server not found (looked for $bin_dir/canal-server and $root/build/bin/canal-server;" \
      "build it, see docs/building.md, or set CANAL_SERVER_BIN)"
  exit 1
fi

if [ -f "$pid_file" ]; then
  old=$(cat "$pid_file" 2>/dev/null)
  if is_canal_server "$old"; then
    say "canal-server is already running (pid $old, $pid_file); stop it first with $bin_dir/stop.sh"
    exit 1
  fi
  say "removing the stale $pid_file (pid ${old:-?} is not running)"
  rm -f "$pid_file"
fi

mkdir -p "$logs/canal" || { say "cannot create the log folder $logs/canal"; exit 1; }
server_log="$logs/canal/canal.log"
stdout_log="$logs/canal/canal_stdout.log"
# Only lines written from now on tell how this start went.
log_offset=$(stat -c %s "$server_log" 2>/dev/null || echo 0)

nohup "$server" --conf "$conf" --logs "$logs" >>"$stdout_log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pid_file"

new_log_lines() { tail -c +"$((log_offset + 1))" "$server_log" 2>/dev/null; }

deadline=$((SECONDS + wait_s))
while :; do
  if new_log_lines | grep -q "canal-server started"; then
    say "canal-server started (pid $pid)"
    say "logs: $server_log, $logs/<destination>/<destination>.log"
    exit 0
  fi
  # Our own child: alive until we wait for it (a name check here would race
  # with the fork's exec of nohup and then canal-server).
  if ! kill -0 "$pid" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ]; then
    wait "$pid" 2>/dev/null
    code=$?
    rm -f "$pid_file"
    say "canal-server failed to start (exit code $code; 2 means a configuration error)"
    echo "---- last lines of $stdout_log"
    tail -n 20 "$stdout_log" 2>/dev/null
    echo "---- last lines of $server_log"
    new_log_lines | tail -n 20
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "canal-server (pid $pid) is running but has not reported a start within ${wait_s} s;" \
        "watch $server_log"
    exit 0
  fi
  sleep 0.2
done
