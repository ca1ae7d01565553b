#!/usr/bin/env bash
# Same-run A/B of the end-to-end catch-up (MariaDB -> canal-server -> the C++
# client, 1,000,000 rows already in the binlog): a baseline build against this
# one, alternating rounds on one sandbox so that both see the same machine.
# This build runs with its metrics endpoint on and scraped every second (what
# an operator runs); the baseline with its defaults.
#
#   bench/compare_catchup.sh --baseline BUILD_DIR [--build DIR] [--rounds N]
#
# BUILD_DIR and DIR hold bin/canal-server and bin/e2e_client (DIR defaults to
# build/). Ports: sandbox 14102, canal-server 14114, metrics 14124. Prints each
# round (rows/s, and the server's CPU seconds for the million rows) and the
# medians, with the change of this build against the baseline.
# No pass/fail: a shared 2-core machine is too noisy for a 2% gate.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
# shellcheck source=bench/lib/install.sh
. "$repo/bench/lib/install.sh"
bench_ab_args compare_catchup -- "$@"

mysql_port=14102 canal_port=14114 metrics_port=14124
work="$build/bench-compare"
server_pid="" scraper_pid=""
cleanup() {
  [ -n "$scraper_pid" ] && kill "$scraper_pid" 2>/dev/null || true
  if [ -n "$server_pid" ]; then stop_process "$server_pid" canal-server || true; fi
  bash "$repo/scripts/mariadb-sandbox.sh" stop --port "$mysql_port" --dir "/tmp/canal-bench-mariadb-$mysql_port" \
    --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "compare_catchup: generating 1,000,000 rows on a sandbox (port $mysql_port)"
bash "$repo/bench/gen_bench_binlog.sh" "$work/data-1m" --port "$mysql_port" --keep-server >/dev/null
first=$(sed -n 's/^files=\([^ ]*\).*/\1/p' "$work/data-1m/MANIFEST")

# run_round BUILD LABEL: one catch-up from the binlog's start; sets rate (rows/s)
# and cpu (the server's CPU seconds). Runs in this shell, so that cleanup sees
# the server it started.
run_round() {
  local bin=$1/bin label=$2 root="$work/$2"
  bench_install "$root" "$canal_port" "$mysql_port" "$first" 4
  if [ "$label" = new ]; then echo "canal.metrics.pull.port = $metrics_port" >> "$root/conf/canal.properties"; fi
  local t0_ms
  t0_ms=$(date +%s%3N)
  "$bin/canal-server" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  server_pid=$!
  if [ "$label" = new ]; then
    ( while sleep 1; do
        { exec 3<>"/dev/tcp/127.0.0.1/$metrics_port" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3 >/dev/null
          exec 3<&-; } 2>/dev/null || true
      done ) &
    scraper_pid=$!
  fi
  local out
  out=$(timeout 300 "$bin/e2e_client" catchup --address "127.0.0.1:$canal_port" --destination bench --rows 1000000 --t0-ms "$t0_ms")
  if [ -n "$scraper_pid" ]; then kill "$scraper_pid" 2>/dev/null || true; wait "$scraper_pid" 2>/dev/null || true; fi
  scraper_pid=""
  # The server's CPU time for the catch-up (user + system): less sensitive to
  # other load on the machine than the wall-clock rate.
  cpu=$(python3 -c 'import os,sys; f=open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")",1)[1].split(); print("%.2f" % ((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")))' "$server_pid")
  local pid=$server_pid
  server_pid=""
  stop_process "$pid" canal-server || fail "canal-server hung on SIGTERM (stacks above)"
  rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["rows_per_s"]))' "$out")
}

base_runs=() new_runs=()
for ((i = 1; i <= rounds; i++)); do
  run_round "$baseline" base; base_runs+=("$rate:$cpu")
  echo "compare_catchup: round $i baseline $rate rows/s, server CPU $cpu s"
  run_round "$build" new; new_runs+=("$rate:$cpu")
  echo "compare_catchup: round $i this build $rate rows/s, server CPU $cpu s (metrics scraped every 1 s)"
done
python3 - "${base_runs[*]}" "${new_runs[*]}" <<'PY'
import statistics, sys
def split(arg):
    runs = [x.split(":") for x in arg.split()]
    return [int(r) for r, _ in runs], [float(c) for _, c in runs]
(br, bc), (nr, nc) = split(sys.argv[1]), split(sys.argv[2])
b, n = statistics.median(br), statistics.median(nr)
print(f"compare_catchup: median rate: baseline {b:,.0f} rows/s, this build {n:,.0f} rows/s: {100 * (n - b) / b:+.1f}%")
b, n = statistics.median(bc), statistics.median(nc)
print(f"compare_catchup: median server CPU: baseline {b:.2f} s, this build {n:.2f} s: {100 * (n - b) / b:+.1f}%")
PY
