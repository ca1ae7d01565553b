#!/usr/bin/env bash
# bench/lib/args.sh's bench_exclusive: a second run of a bench script with
# fixed ports fails at once naming the first; a stale pid file (a dead run, a
# reused pid that is not the script) does not block. Run by ctest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'kill "${first:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

# check NAME: bench_exclusive as a script named NAME runs it; prints its output, exit status last.
check() {
  bash -c '. "$1/bench/lib/args.sh"; bench_name=$2; bench_exclusive; echo "ran as $$"' check "$repo" "$1" 2>&1 && echo "status 0" ||
    echo "status $?"
}
expect() {  # expect WHAT OUTPUT PATTERN
  if ! grep -q -- "$3" <<<"$2"; then
    echo "FAIL: $1: expected /$3/ in:"
    echo "$2"
    exit 1
  fi
}

# No pid file: runs, and leaves its pid.
out=$(check fake_bench)
expect "first run" "$out" "status 0"
[ -f "$tmp/canal-bench-fake_bench.pid" ] || { echo "FAIL: no pid file"; exit 1; }

# A live process whose command line names the script: refused, naming it.
bash -c 'exec -a fake_bench_running sleep 30' &
first=$!
sleep 0.2
echo "$first" > "$tmp/canal-bench-fake_bench.pid"
out=$(check fake_bench)
expect "second run" "$out" "status 1"
expect "second run" "$out" "FAIL: another fake_bench run (pid $first"
expect "second run" "$out" "same fixed ports"

# Another script's lock does not block this one.
out=$(check other_bench)
expect "other script" "$out" "status 0"

# A live pid that is not the script (a reused pid): not blocked.
echo "$$" > "$tmp/canal-bench-fake_bench.pid"
out=$(check fake_bench)
expect "reused pid" "$out" "status 0"

# A dead pid, and garbage: not blocked.
kill "$first"; wait "$first" 2>/dev/null || true
echo "$first" > "$tmp/canal-bench-fake_bench.pid"
out=$(check fake_bench)
expect "dead run" "$out" "status 0"
echo "not a pid" > "$tmp/canal-bench-fake_bench.pid"
out=$(check fake_bench)
expect "garbage pid file" "$out" "status 0"
echo "bench_exclusive: all cases passed"
