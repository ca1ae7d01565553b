# shellcheck shell=bash
# shellcheck disable=SC2154  # dir, wipe, marker, ... belong to the sourcing script
# Shared by scripts/mariadb-sandbox.sh and scripts/zk-sandbox.sh (sourced, not
# run). The caller defines log, die, running_pid and the variables dir, marker,
# wipe, port, pidfile and STOP_TIMEOUT_S.

# wait_gone PID SECONDS: true once PID has exited, false when it outlives SECONDS.
wait_gone() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# wipe_if_asked: with --wipe, deletes the sandbox dir, but only one this script
# made (a start that failed early, e.g. on a busy port, leaves only its lock).
wipe_if_asked() {
  if [ "$wipe" = 1 ] && [ -d "$dir" ]; then
    if [ ! -f "$marker" ] && [ -n "$(ls -A "$dir" | grep -vx '.lock')" ]; then
      die "refusing to delete $dir: not made by this script"
    fi
    rm -rf "$dir"
    log "deleted $dir"
  fi
}

# do_kill [FILE...]: SIGKILL the server (a crash, for fault tests), wait until
# it is gone, and remove the pid file and any FILE it leaves behind (a stale
# pid file could name a reused pid).
do_kill() {
  local pid
  if ! pid=$(running_pid); then
    log "not running (port $port, dir $dir)"
    return 0
  fi
  log "killing pid $pid (SIGKILL)"
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid" "$STOP_TIMEOUT_S" || die "pid $pid survived SIGKILL for ${STOP_TIMEOUT_S}s"
  rm -f "$pidfile" "$@"
  log "killed"
}

# lock_dir SECONDS: serialises commands on one sandbox dir (two starts must not
# both initialise it; a stop must not wipe a half-started server).
lock_dir() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>> "$dir/.lock"
  flock -w "$1" 9 || die "timed out waiting for another command on $dir"
}
