#!/usr/bin/env bash
# The performance targets, measured and judged (scripts/test.sh gates CI on
# same-run ratios and loose sanity bounds only; this script holds the real
# targets). Run it on a quiet machine: the absolute figures move with load.
#
#   scripts/bench.sh [--no-build] [--only catchup|decode|e2e|memory|snapshot|store|mq ...]
#
# Builds the Release targets the benchmarks need (unless --no-build), then runs
# each benchmark script with its default thresholds, which are the targets
# (docs/performance.md lists them and how each is measured):
#   catchup  bench/run_catchup_bench.sh  catch-up >= 500k rows/s
#   decode   bench/run_decode_bench.sh   typed >= 1M rows/s, JSON >= 6x mariadb-binlog (bulk;
#                                        with e2e also on its single-row-transaction binlog)
#   e2e      bench/run_e2e_bench.sh      catch-up >= 300k rows/s, p99 < 20 ms at 10k rows/s,
#                                        peak RSS < 256 MiB, >= 4x zongji on both workloads
#   memory   bench/run_memory_bench.sh   6M-row transaction: peak RSS < 256 MiB (fast and slow
#                                        client), < 64 MiB within 10 s after; 64 MiB row: < 256 MiB
#   snapshot bench/run_snapshot_bench.sh initial snapshot of 1M rows >= mariadb-dump's rows/s (same
#                                        run), server peak RSS < 256 MiB (also 256 KiB and 64 MiB rows)
#   store    bench/run_store_bench.sh    >= 10M entries/s
#   mq       bench/run_mq_bench.sh       >= 30k rows/s per broker; Kafka >= 0.5x, RabbitMQ >= 0.3x the TCP path
# Every figure is printed; the summary names each target met or missed. Exit 1
# when one was missed. Figures also land in build/*.json.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
build=1
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --only) only+=("$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# The targets are the scripts' defaults: drop CI's bounds if the caller has them.
unset BENCH_MIN_CATCHUP_FILE_RATIO BENCH_MIN_CATCHUP_ROWS_PER_S BENCH_MIN_RATIO BENCH_MIN_TYPED_ROWS_PER_S \
  BENCH_MIN_PEER_RATIO BENCH_MIN_E2E_ROWS_PER_S BENCH_MAX_P99_MS BENCH_MAX_P99_BATCHED_MS BENCH_MAX_RSS_MIB \
  STORE_BENCH_MIN_ENTRIES_PER_S BENCH_MIN_MQ_ROWS_PER_S BENCH_MIN_MQ_TCP_RATIO BENCH_TXN_MAX_RSS_MIB BENCH_TXN_MAX_RSS_AFTER_MIB \
  BENCH_BLOB_MAX_RSS_MIB BENCH_MIN_SNAPSHOT_DUMP_RATIO BENCH_SNAPSHOT_MAX_RSS_MIB BENCH_MIN_SNAPSHOT_ROWS_PER_S
# Decode judges the 6x target here (its script defaults to 5x for older callers).
export BENCH_MIN_RATIO=6

wanted() {
  [ "${#only[@]}" -eq 0 ] && return 0
  local o
  for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done
  return 1
}

if [ "$build" = 1 ]; then
  bash scripts/build.sh --release --target canal-server canal-cli canal-binlog e2e_client catchup_bench \
    decode_bench store_bench mq_bench || { echo "bench.sh: build failed"; exit 1; }
fi

summary=()
missed=0
run() {
  local name=$1 start=$SECONDS
  shift
  echo
  echo "==== $name"
  if "$@"; then
    summary+=("met     $(printf '%5ds' $((SECONDS - start)))  $name")
  else
    summary+=("MISSED  $(printf '%5ds' $((SECONDS - start)))  $name (figures above)")
    missed=$((missed + 1))
  fi
}

wanted catchup && run "catch-up" bash bench/run_catchup_bench.sh
wanted decode && run "decode" bash bench/run_decode_bench.sh --no-gbench
wanted e2e && run "end to end (catch-up, peer, latency, memory)" bash bench/run_e2e_bench.sh
# No typed-rows target for single-row transactions: only the ratio is judged.
wanted e2e && wanted decode && run "decode, single-row transactions" env BENCH_MIN_TYPED_ROWS_PER_S=0 \
  bash bench/run_decode_bench.sh --data build/bench-e2e/data-single --runs 3 --no-gbench
wanted memory && run "memory (huge transaction, huge row)" bash bench/run_memory_bench.sh
wanted snapshot && run "snapshot (1M rows against mariadb-dump, wide rows)" bash bench/run_snapshot_bench.sh
wanted store && run "store" bash bench/run_store_bench.sh
wanted mq && run "MQ" bash bench/run_mq_bench.sh

echo
echo "==== targets (load on this machine: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${summary[@]}"
[ "$missed" -eq 0 ]
