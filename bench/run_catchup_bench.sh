#!/usr/bin/env bash
# Catch-up benchmark: a replica streaming 1,000,000 already-written rows from a
# local MariaDB into decoded transactions, against the file decoder on the same
# binlog files in the same run, with a pass/fail target.
#
#   bench/run_catchup_bench.sh [--build-dir DIR] [--port P]
#
# Makes the data with bench/gen_bench_binlog.sh --keep-server (a sandbox on port
# P, default 13399, left holding the binlogs; its copies go to DIR/bench-data,
# which run_decode_bench.sh then reuses), runs build/bin/catchup_bench (3 rounds
# each, Google Benchmark JSON in DIR/catchup_bench.json), stops the sandbox, and
# prints rows/s and MB/s (10^6 bytes of binlog) for both paths and their ratio.
#
# Fails (exit 1) when catch-up < BENCH_MIN_CATCHUP_ROWS_PER_S (default 500000)
# rows/s, best of the 3 rounds, or when catch-up is slower than
# BENCH_MIN_CATCHUP_FILE_RATIO (default 0.3) times the file decoder on the same
# binlog in the same run (the gate a busy machine does not move much).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
build="$repo/build"
port=13399
bench_args run_catchup_bench --build-dir build --port port -- "$@"
bench_exclusive
min_rate=${BENCH_MIN_CATCHUP_ROWS_PER_S:-500000}
min_file_ratio=${BENCH_MIN_CATCHUP_FILE_RATIO:-0.3}
data="$build/bench-data"
bench="$build/bin/catchup_bench"
bench_built "$bench"

sandbox=(bash "$repo/scripts/mariadb-sandbox.sh")
sbargs=(--port "$port" --dir "/tmp/canal-bench-mariadb-$port")
cleanup() { "${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true; }
trap cleanup EXIT

# The server must hold exactly the rows the copies hold: always generate afresh.
say "generating the 1M-row binlog on a sandbox (port $port)"
bash "$repo/bench/gen_bench_binlog.sh" "$data" --port "$port" --keep-server

out="$build/catchup_bench.json"
CATCHUP_PORT=$port CATCHUP_DATA=$data "$bench" --benchmark_out="$out" --benchmark_out_format=json \
  --benchmark_report_aggregates_only=false

python3 - "$out" "$min_rate" "$min_file_ratio" <<'PY'
import json, sys
path, minimum, min_ratio = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
runs = {}
for b in json.load(open(path))["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    if b.get("error_occurred"):
        sys.exit(f"catch-up bench: {b['name']}: {b.get('error_message')}")
    name = b["name"].split("/")[0]
    runs.setdefault(name, []).append((b["items_per_second"], b["bytes_per_second"]))
live = max(runs.get("BM_CatchUpFromMariadb", [(0, 0)]))
file = max(runs.get("BM_FileDecodeSameBinlog", [(0, 0)]))
if live[0] == 0 or file[0] == 0:
    sys.exit("catch-up bench: missing results")
print(f"catch-up from MariaDB : {live[0] / 1e3:8.0f} k rows/s  {live[1] / 1e6:7.1f} MB/s  (best of {len(runs['BM_CatchUpFromMariadb'])})")
print(f"file decoder, same log: {file[0] / 1e3:8.0f} k rows/s  {file[1] / 1e6:7.1f} MB/s")
print(f"network path / file   : {live[0] / file[0]:.2f}")
if live[0] < minimum:
    sys.exit(f"catch-up bench: {live[0]:.0f} rows/s < bound {minimum:.0f}")
if live[0] / file[0] < min_ratio:
    sys.exit(f"catch-up bench: network path / file {live[0] / file[0]:.2f} < bound {min_ratio}")
print(f"catch-up bench: {live[0] / 1e3:.0f} k rows/s >= bound {minimum / 1e3:.0f} k, "
      f"network path / file {live[0] / file[0]:.2f} >= {min_ratio}")
PY
