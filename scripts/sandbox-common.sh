# shellcheck shell=bash
# shellcheck disable=SC2154  # dir, wipe, marker, ... belong to the sourcing script
# Shared by the sandbox scripts in scripts/ (sourced, not run). The caller
# defines running_pid and the variables dir, marker, wipe, port and pidfile,
# and calls sandbox_timeouts; sourcing it sets -euo pipefail.

set -euo pipefail

# sandbox_timeouts START STOP: how long starting and stopping may take, in
# seconds (START_TIMEOUT_S, STOP_TIMEOUT_S).
sandbox_timeouts() {
  readonly START_TIMEOUT_S=$1 STOP_TIMEOUT_S=$2
}

# Messages go to stderr under the script's name ("zk-sandbox: ..."), so that
# stdout carries only what a caller reads (a port, a binlog dir).
log() { echo "$(basename "$0" .sh): $*" >&2; }
die() { log "error: $*"; exit 1; }

# usage [STATUS]: the script's header comment as help; 2 (bad usage) unless told.
usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
  exit "${1:-2}"
}

# parse_sandbox_args DEFAULT_PORT LAST_PORT DIR_PREFIX COMMAND [ARGS...]: the
# arguments every sandbox takes (--port N, --dir D, --wipe, -h), and the script's
# own through parse_extra_arg when it defines one; sets cmd, port, dir (absolute;
# default DIR_PREFIX-PORT) and wipe. LAST_PORT is the highest
# --port the sandbox can use (one that opens ports above N asks for less).
parse_sandbox_args() {
  local last_port=$2 dir_prefix=$3
  port=$1
  shift 3
  cmd=${1:-}
  [ -n "$cmd" ] || usage
  shift
  dir=""
  wipe=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
      --port=*) port=${1#--port=}; shift ;;
      --dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
      --dir=*) dir=${1#--dir=}; shift ;;
      --wipe) wipe=1; shift ;;
      -h|--help) usage 0 ;;
      *)
        # A script's own options: parse_extra_arg sets `taken` to how many
        # arguments it used (0: not one of its options).
        taken=0
        if declare -F parse_extra_arg >/dev/null; then parse_extra_arg "$@"; fi
        [ "$taken" -gt 0 ] || { log "unknown argument: $1"; usage; }
        shift "$taken"
        ;;
    esac
  done
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt "$last_port" ]; then
    die "bad --port: $port (1 to $last_port)"
  fi
  [ -n "$dir" ] || dir="$dir_prefix-$port"
  case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
}

# wait_gone PID SECONDS: true once PID has exited, false when it outlives SECONDS.
wait_gone() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# sandbox_stop [KILL_FN]: SIGTERM the server and wait STOP_TIMEOUT_S for it to
# exit; past that, KILL_FN PID (default kill_pid; a server with processes of
# its own beside PID names one that kills those too) and wait again. Removes
# the pid file once it is gone.
sandbox_stop() {
  local kill_fn=${1:-kill_pid} pid
  if pid=$(running_pid); then
    log "stopping pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" "$STOP_TIMEOUT_S"; then
      log "pid $pid still running after ${STOP_TIMEOUT_S}s; killing it"
      "$kill_fn" "$pid"
      wait_gone "$pid" "$STOP_TIMEOUT_S" || die "pid $pid survived SIGKILL"
    fi
    rm -f "$pidfile"
    log "stopped"
  else
    log "not running (port $port, dir $dir)"
  fi
}

# kill_pid PID: SIGKILL PID (gone already is fine).
kill_pid() { kill -KILL "$1" 2>/dev/null || true; }

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

# sandbox_status [LINE...]: "running", its pid and port and each LINE ("dir: D"),
# exit 0; or "stopped (port N, dir D)", exit 3.
sandbox_status() {
  local pid line
  if pid=$(running_pid); then
    echo "running"
    echo "pid: $pid"
    echo "port: $port"
    for line in "$@"; do echo "$line"; done
    return 0
  fi
  echo "stopped (port $port, dir $dir)"
  return 3
}

# pid_alive_from FILE [FIELD PATTERN]: prints the pid FILE holds when that
# process is alive and, given FIELD (cmdline or environ, from /proc) and
# PATTERN, when its FIELD matches PATTERN (a reused pid is not ours); fails
# otherwise.
pid_alive_from() {
  local file=$1 field=${2:-} pattern=${3:-} pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file" 2>/dev/null || true)
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [ -n "$field" ]; then
    tr '\0' ' ' < "/proc/$pid/$field" 2>/dev/null | grep -q -- "$pattern" || return 1
  fi
  echo "$pid"
}
