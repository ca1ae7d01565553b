#!/usr/bin/env bash
# Stops the canal-server started by bin/startup.sh.
#
#   bin/stop.sh
#
# Sends SIGTERM to the pid in bin/canal.pid and waits up to CANAL_STOP_WAIT
# seconds (default 30) while the server stops its sessions and instances and
# writes the client cursors. Exit 0 when it stopped cleanly (or was not
# running); 1 when it is still running after the wait, or when it ended
# without logging "canal-server stopped" (e.g. it could not write the
# cursors): then the log's errors since the SIGTERM are shown.
set -u

bin_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pid_file="$bin_dir/canal.pid"
wait_s=${CANAL_STOP_WAIT:-30}

say() { echo "stop.sh: $*"; }

# shellcheck source=bin/canal-common.sh
. "$bin_dir/canal-common.sh"

if [ ! -f "$pid_file" ]; then
  say "canal-server is not running (no $pid_file)"
  exit 0
fi
pid=$(cat "$pid_file" 2>/dev/null)
if ! is_canal_server "$pid"; then
  rm -f "$pid_file"
  say "canal-server is not running (removed the stale $pid_file for pid ${pid:-?})"
  exit 0
fi

# The server's log (startup.sh passes --logs DIR), and how far it went
# before our SIGTERM: what the server says after it tells how the stop went.
logs=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | awk 'prev == "--logs" { print; exit } { prev = $0 }')
server_log=${logs:+$logs/canal/canal.log}
log_start=0
if [ -n "$server_log" ] && [ -f "$server_log" ]; then log_start=$(stat -c %s "$server_log" 2>/dev/null || echo 0); fi

kill -TERM "$pid" 2>/dev/null
deadline=$((SECONDS + wait_s))
while is_canal_server "$pid"; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "canal-server (pid $pid) did not stop within ${wait_s} s and still runs; see logs/canal/canal.log." \
        "kill -9 $pid forces it (cursors acked since the last write may then be delivered again)"
    exit 1
  fi
  sleep 0.1
done
rm -f "$pid_file"
if [ -n "$server_log" ] && [ -f "$server_log" ]; then
  said=$(tail -c +"$((log_start + 1))" "$server_log" 2>/dev/null)
  if ! grep -q '] canal-server stopped$' <<<"$said"; then
    say "canal-server (pid $pid) exited, but not cleanly: it did not log \"canal-server stopped\"" \
        "(acked cursors may not be written; clients may get those batches again). From $server_log:"
    errors=$(grep -E ' (error|critical) ' <<<"$said" | tail -n 5)
    echo "${errors:-$(tail -n 5 <<<"$said")}"
    exit 1
  fi
fi
say "canal-server stopped (pid $pid)"
exit 0
