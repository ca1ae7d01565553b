# shellcheck shell=bash
# Option parsing and messages shared by the bench scripts (sourced, not
# run). A script's usage is its header comment: the lines after the #! line
# up to the first line that is not a comment, which -h / --help prints.
#
#   bench_args NAME KEY TARGET ... -- "$@"
#
# Pairs of KEY TARGET, then --, then the script's arguments:
#   --opt var        --opt takes a value, stored in var
#   --opt var=value  --opt is a flag that sets var to value
#   WORD var         (KEY without a leading -) a bare argument is stored in var
# Anything else ends the script with "NAME: unknown argument X" (or "unknown
# option X" when bare arguments are taken) and exit status 2, as does an
# option missing its value. Variables are set in the caller's scope; defaults
# are the caller's to set first.

bench_usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

bench_args() {
  local name=$1 bare="" arg
  local -A takes=() sets=()
  bench_name=$name
  shift
  while [ "$1" != -- ]; do
    case "$1" in
      -*) if [[ "$2" == *=* ]]; then sets[$1]=$2; else takes[$1]=$2; fi ;;
      *) bare=$2 ;;
    esac
    shift 2
  done
  shift
  while [ $# -gt 0 ]; do
    arg=$1
    if [ "$arg" = -h ] || [ "$arg" = --help ]; then
      bench_usage
      exit 0
    elif [ -n "$arg" ] && [ -n "${takes[$arg]+x}" ]; then
      [ $# -ge 2 ] || { echo "$name: $arg needs a value" >&2; exit 2; }
      printf -v "${takes[$arg]}" '%s' "$2"
      shift 2
    elif [ -n "$arg" ] && [ -n "${sets[$arg]+x}" ]; then
      printf -v "${sets[$arg]%%=*}" '%s' "${sets[$arg]#*=}"
      shift
    elif [ -n "$bare" ] && [[ "$arg" != -* ]]; then
      printf -v "$bare" '%s' "$arg"
      shift
    elif [ -n "$bare" ]; then
      echo "$name: unknown option $arg" >&2
      exit 2
    else
      echo "$name: unknown argument $arg" >&2
      exit 2
    fi
  done
}

# After bench_args: say prints "NAME: TEXT"; fail says "FAIL: TEXT" and exits
# 1; bench_built fails naming the first PROGRAM (a path) that is not built.
say() { echo "$bench_name: $*"; }
fail() { say "FAIL: $*"; exit 1; }
bench_built() {
  local p
  for p in "$@"; do
    [ -x "$p" ] || fail "$p not built (scripts/build.sh --release)"
  done
}

# bench_exclusive: after bench_args, in a script whose sandboxes and servers
# listen on fixed ports: fails at once when another run of the same script is
# still going (a second run would read the first one's data, or stop its
# sandbox under it). A pid file, not flock: a lock descriptor would be
# inherited by the sandboxes and servers the run starts, and outlive it.
bench_exclusive() {
  local pidfile="${TMPDIR:-/tmp}/canal-bench-$bench_name.pid" other=""
  other=$(cat "$pidfile" 2>/dev/null || true)
  if [[ "$other" =~ ^[0-9]+$ ]] && [ "$other" != "$$" ] && kill -0 "$other" 2>/dev/null &&
     tr '\0' ' ' < "/proc/$other/cmdline" 2>/dev/null | grep -q -- "$bench_name"; then
    fail "another $bench_name run (pid $other, $pidfile) is going: both would use the same fixed ports; wait for it to end"
  fi
  echo "$$" > "$pidfile"
}

# stop_process PID WHAT: SIGTERM, then up to BENCH_STOP_TIMEOUT_S (default 30) seconds for
# PID (a child of the caller) to end. One still there is a hang on stop, a bug worth a failed
# step rather than a CI run that times out: its threads' stacks go to stderr (when gdb is
# installed), it is killed, and the call returns 1.
stop_process() {
  local pid=$1 what=$2 limit=${BENCH_STOP_TIMEOUT_S:-30} i state
  kill "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  for ((i = 0; i < limit * 5; i++)); do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
    if [ "$state" = gone ] || [ "$state" = Z ]; then
      wait "$pid" 2>/dev/null
      return 0
    fi
    sleep 0.2
  done
  say "$what (pid $pid) did not stop within ${limit}s of SIGTERM; its threads:" >&2
  if command -v gdb >/dev/null 2>&1; then
    timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 20" 2>/dev/null | grep -E '^(Thread|#)' >&2 || true
  fi
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null
  return 1
}

# warm_free_memory: touch 128 MiB in a throwaway process (dd's buffer) and
# free it, just before a measured process starts. A VM with free page
# reporting (virtio-balloon, as on the CI machines) hands memory that has
# been free for a few seconds back to its host, and the next process to
# touch it pays a host fault per 4 KiB page (~11-16 us here, against ~5 us
# for memory freed just before). A server started right after another run
# would get warm pages and one started after an idle gap cold ones: ~15%
# more CPU for the same 1M-row catch-up (docs/performance-journal.md, entry 23).
# Warming first gives every measured run the same start.
warm_free_memory() {
  dd if=/dev/zero of=/dev/null bs=128M count=1 status=none 2>/dev/null || true
}

# bench_ab_args NAME [KEY TARGET ...] -- "$@": the options of the same-run
# A/B scripts, a baseline build against this one: --baseline BUILD_DIR
# (required; sets baseline), --build DIR (build, default $repo/build),
# --rounds N (rounds, default 3) and the script's own KEY TARGET pairs (as
# bench_args). Then both build dirs must hold bin/canal-server and
# bin/e2e_client (else exit 2, naming what is missing).
# shellcheck disable=SC2154,SC2034  # repo is the caller's; it reads what this sets
bench_ab_args() {
  local name=$1 b p
  shift
  build="$repo/build" baseline="" rounds=3
  bench_args "$name" --baseline baseline --build build --rounds rounds "$@"
  [ -n "$baseline" ] || { echo "$name: --baseline BUILD_DIR is required" >&2; exit 2; }
  for b in "$baseline" "$build"; do
    for p in canal-server e2e_client; do
      [ -x "$b/bin/$p" ] || { echo "$name: $b/bin/$p is missing" >&2; exit 2; }
    done
  done
}
