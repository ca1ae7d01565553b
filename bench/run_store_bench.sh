#!/usr/bin/env bash
# Store benchmark: put -> get -> ack of 64-byte entries between two threads
# (build/bin/store_bench). Takes the best of three repetitions (the machine may
# be busy) and fails when batches of 1000 move fewer than
# STORE_BENCH_MIN_ENTRIES_PER_S (default 10 million) entries per second.
#
#   bench/run_store_bench.sh [--build-dir DIR]
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
build="$repo/build"
bench_args run_store_bench --build-dir build -- "$@"
bench="$build/bin/store_bench"
out="$build/store_bench.json"
[ -x "$bench" ] || { echo "run_store_bench: missing $bench (scripts/build.sh --release)"; exit 1; }
"$bench" --benchmark_filter='^BM_PutGetAck' --benchmark_min_time=0.5 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=false --benchmark_out="$out" --benchmark_out_format=json >/dev/null
python3 - "$out" "${STORE_BENCH_MIN_ENTRIES_PER_S:-10000000}" <<'PY'
import json, sys
path, minimum = sys.argv[1], float(sys.argv[2])
best = {}
for b in json.load(open(path))["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    name = b["run_name"]
    if b["items_per_second"] > best.get(name, {}).get("items_per_second", 0):
        best[name] = b
target = "BM_PutGetAckItemSize/batch:1000/bytes:64/real_time"
for name, b in best.items():
    print(f"{name}: {b['items_per_second'] / 1e6:.1f} M entries/s, {b['ns_per_entry']:.1f} ns/entry")
if target not in best:
    sys.exit(f"store bench: {target} missing from the results")
rate = best[target]["items_per_second"]
if rate < minimum:
    sys.exit(f"store bench: {rate / 1e6:.1f} M entries/s < bound {minimum / 1e6:.1f} M")
print(f"store bench: {rate / 1e6:.1f} M entries/s >= bound {minimum / 1e6:.1f} M")
PY
