#!/usr/bin/env bash
# End-to-end decode benchmark: canal-binlog against mariadb-binlog on the same
# 1M-row binlog, with pass/fail targets.
#
#   bench/run_decode_bench.sh [--build-dir DIR] [--data DIR] [--runs N] [--no-gbench]
#
# Data: DIR (default build/bench-data) made by bench/gen_bench_binlog.sh when it
# has no MANIFEST yet, reused otherwise. Measures wall-clock time, output to
# /dev/null, best of N (default 5) rounds in which the decoders take turns:
#   typed  canal-binlog decode --count-only   (every row into typed values, 1 core)
#   json   canal-binlog decode                (one JSON line per row change; rows
#          events are formatted on one thread per core, at most 4)
#   json1  canal-binlog decode --threads 0    (the same on the decoding thread alone)
#   mysql  mariadb-binlog -vv --base64-output=decode-rows
# and prints rows/s and MB/s (10^6 bytes of binlog) for each, and json's speed-up
# over mariadb-binlog. Before timing it checks that canal-binlog sees every row.
# Then (unless --no-gbench) runs build/bin/decode_bench on the same file, for
# the in-memory figures, before judging the targets.
#
# Fails (exit 1) when typed < BENCH_MIN_TYPED_ROWS_PER_S (default 1000000) rows/s
# or the speed-up < BENCH_MIN_RATIO (default 5).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
build="$repo/build"
data=""
runs=5
gbench=1
bench_args run_decode_bench --build-dir build --data data --runs runs --no-gbench gbench=0 -- "$@"
[ -n "$data" ] || data="$build/bench-data"
min_typed=${BENCH_MIN_TYPED_ROWS_PER_S:-1000000}
min_ratio=${BENCH_MIN_RATIO:-5}


canal_binlog="$build/bin/canal-binlog"
bench_built "$canal_binlog"
mariadb_binlog=$(command -v mariadb-binlog || command -v mysqlbinlog || true)
[ -n "$mariadb_binlog" ] || fail "mariadb-binlog not found (install mariadb-client)"

if [ ! -f "$data/MANIFEST" ]; then
  say "no benchmark binlog in $data; generating it"
  bash "$repo/bench/gen_bench_binlog.sh" "$data" ${BENCH_PORT:+--port "$BENCH_PORT"}
else
  say "reusing $data (delete it to regenerate)"
fi
manifest_value() { sed -n "s/^$1=//p" "$data/MANIFEST"; }
rows=$(manifest_value rows)
bytes=$(manifest_value bytes)
read -r -a names <<< "$(manifest_value files)"
files=()
for n in "${names[@]}"; do files+=("$data/$n"); done
if [ "${#files[@]}" -eq 0 ] || [ -z "$rows" ] || [ -z "$bytes" ]; then fail "bad $data/MANIFEST"; fi
say "input: ${names[*]} in $data: $rows rows, $bytes bytes"

# Untimed correctness checks: a fast wrong decoder is no result.
summary=$("$canal_binlog" decode --count-only "${files[@]}") || fail "canal-binlog decode --count-only failed"
say "count-only says: $summary"
# Accepts rows=N, rows: N, "rows":N or N rows.
counted=$(grep -oE '"?rows"?[=: ]+[0-9]+|[0-9]+ rows' <<< "$summary" | grep -oE '[0-9]+' | head -n 1 || true)
[ "$counted" = "$rows" ] || fail "count-only reported ${counted:-no} rows, the binlog has $rows"
json_rows=$("$canal_binlog" decode "${files[@]}" | grep -c '"type": *"INSERT"' || true)
[ "$json_rows" = "$rows" ] || fail "decode printed $json_rows INSERT lines, the binlog has $rows"

# Wall-clock seconds of one run of "$@" with output discarded.
time_once() {
  local t0 t1
  t0=$EPOCHREALTIME
  "$@" > /dev/null || { say "FAIL: command failed: $*" >&2; return 1; }
  t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'
}
min_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b < a) print b; else print a }'; }

# The decoders take turns within each round, so a machine whose speed drifts
# (shared cores) affects them alike; each keeps its best round.
say "timing, best of $runs interleaved rounds ..."
t_typed="" t_json="" t_json1="" t_mysql=""
for ((round = 0; round < runs; round++)); do
  t=$(time_once "$canal_binlog" decode --count-only "${files[@]}") || exit 1; t_typed=$(min_of "$t_typed" "$t")
  t=$(time_once "$canal_binlog" decode "${files[@]}") || exit 1; t_json=$(min_of "$t_json" "$t")
  t=$(time_once "$canal_binlog" decode --threads 0 "${files[@]}") || exit 1; t_json1=$(min_of "$t_json1" "$t")
  t=$(time_once "$mariadb_binlog" -vv --base64-output=decode-rows "${files[@]}") || exit 1; t_mysql=$(min_of "$t_mysql" "$t")
done
threads=$(nproc 2>/dev/null || echo 1)
[ "$threads" -gt 4 ] && threads=4

targets_met=1
awk -v rows="$rows" -v bytes="$bytes" -v tt="$t_typed" -v tj="$t_json" -v tj1="$t_json1" -v tm="$t_mysql" -v th="$threads" \
    -v min_typed="$min_typed" -v min_ratio="$min_ratio" '
function line(name, t) {
  printf "%-56s %9.3f %14.0f %10.1f\n", name, t, rows / t, bytes / t / 1e6
}
BEGIN {
  printf "%-56s %9s %14s %10s\n", "decoder", "seconds", "rows/s", "MB/s"
  line("canal-binlog decode --count-only (typed, 1 core)", tt)
  line("canal-binlog decode (JSON lines, " th " formatting threads)", tj)
  line("canal-binlog decode --threads 0 (JSON, 1 core)", tj1)
  line("mariadb-binlog -vv --base64-output=decode-rows", tm)
  ratio = tm / tj
  typed = rows / tt
  printf "JSON speed-up over mariadb-binlog: %.2fx (single-threaded JSON: %.2fx)\n", ratio, tm / tj1
  printf "targets: typed >= %d rows/s (%s), speed-up >= %sx (%s)\n",
         min_typed, typed >= min_typed ? "met" : "MISSED",
         min_ratio, ratio >= min_ratio ? "met" : "MISSED"
  exit !(typed >= min_typed && ratio >= min_ratio)
}' || targets_met=0

if [ "$gbench" = 1 ]; then
  if [ -x "$build/bin/decode_bench" ]; then
    say "Google Benchmark on ${files[0]}"
    BENCH_BINLOG="${files[0]}" "$build/bin/decode_bench" --benchmark_min_time=0.5 \
      || fail "decode_bench failed"
  else
    say "skipping decode_bench: $build/bin/decode_bench not built"
  fi
fi
[ "$targets_met" = 1 ] || fail "a decode throughput target was missed (table above)"
say "PASS"
