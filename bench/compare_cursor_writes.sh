#!/usr/bin/env bash
# Same-run A/B of the durable cursor writes: a baseline build against this one,
# alternating on one sandbox so that both see the same machine. Per round and
# build:
#   - a bulk catch-up (1,000,000 rows in 10,000-row transactions) with the
#     server under `strace -f -T -e trace=fsync,fdatasync`: the sync calls per
#     1M rows and the seconds spent in them (the server's own, for meta.dat);
#   - 10 s of 10,000 single-row transactions/s (`e2e_client latency`), the
#     server started at the primary's end: p50 / p99 / max.
#
#   bench/compare_cursor_writes.sh --baseline BUILD_DIR [--build DIR] [--rounds N] [--port P]
#
# BUILD_DIR and DIR hold bin/canal-server and bin/e2e_client (DIR defaults to
# build/). Ports: sandbox P (default 17301), canal-server P+20. Needs strace.
# No pass/fail: fsync times on a shared disk vary more than a gate allows.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
# shellcheck source=bench/lib/install.sh
. "$repo/bench/lib/install.sh"
mysql_port=17301
bench_ab_args compare_cursor_writes --port mysql_port -- "$@"
command -v strace >/dev/null || { echo "compare_cursor_writes: strace is not installed" >&2; exit 2; }

canal_port=$((mysql_port + 20))
work="$build/bench-cursor-writes"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -INT $(pgrep -P "$server_pid") 2>/dev/null || true  # the server under strace
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  bash "$repo/scripts/mariadb-sandbox.sh" stop --port "$mysql_port" --dir "/tmp/canal-bench-mariadb-$mysql_port" \
    --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "compare_cursor_writes: generating 1,000,000 rows on a sandbox (port $mysql_port)"
bash "$repo/bench/gen_bench_binlog.sh" "$work/data-1m" --batch 10000 --port "$mysql_port" --keep-server >/dev/null
mariadb --no-defaults --socket="/tmp/canal-bench-mariadb-$mysql_port/mariadbd.sock" -uroot -e \
  "CREATE TABLE bench.latency (id BIGINT AUTO_INCREMENT PRIMARY KEY, seq BIGINT NOT NULL, sent_us BIGINT NOT NULL)"
first=$(sed -n 's/^files=\([^ ]*\).*/\1/p' "$work/data-1m/MANIFEST")

# start BUILD LABEL MODE: a fresh install root; MODE bulk streams from the
# binlog's first file under strace, MODE latency from the primary's end.
start() {
  local bin=$1/bin root="$work/$2-$3"
  if [ "$3" = bulk ]; then
    bench_install "$root" "$canal_port" "$mysql_port" "$first" 4
    strace -f --seccomp-bpf -T -e trace=fsync,fdatasync -o "$root/strace.txt" \
      "$bin/canal-server" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  else
    bench_install "$root" "$canal_port" "$mysql_port"
    "$bin/canal-server" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  fi
  server_pid=$!
  local i
  for ((i = 0; i < 3000; i++)); do (: < "/dev/tcp/127.0.0.1/$canal_port") 2>/dev/null && return 0; sleep 0.01; done
  echo "compare_cursor_writes: canal-server did not listen on $canal_port (see $root/stdout.log)" >&2
  exit 1
}
stop() {
  # Under strace the server is strace's child, and strace would not pass SIGINT on.
  kill -INT $(pgrep -P "$server_pid") 2>/dev/null || true
  kill -INT "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# round BUILD LABEL: prints one line.
round() {
  local bin=$1/bin label=$2 out syncs latency
  start "$1" "$label" bulk
  out=$(timeout 300 "$bin/e2e_client" catchup --address "127.0.0.1:$canal_port" --destination bench --rows 1000000 \
          --t0-ms "$(date +%s%3N)")
  stop
  # strace -f may split a call into "unfinished" and "resumed" lines: the time is on the latter.
  syncs=$(awk '/fsync|fdatasync/ && /<[0-9.]+>$/ {
      k = ($0 ~ /fdatasync/) ? "fdatasync" : "fsync"; n[k]++; match($0, /<([0-9.]+)>$/, a); t[k] += a[1] }
    END { for (k in n) printf "%d %s %.3f s, ", n[k], k, t[k] }' "$work/$label-bulk/strace.txt")
  start "$1" "$label" latency
  latency=$(timeout 120 "$bin/e2e_client" latency --address "127.0.0.1:$canal_port" --destination bench \
              --mysql-port "$mysql_port" --rate 10000 --rows-per-tx 1 --seconds 10)
  stop
  echo "compare_cursor_writes: $label, load $(cut -d' ' -f1 /proc/loadavg): bulk 1M rows: ${syncs}catch-up" \
    "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows_per_s"])' "$out") rows/s;" \
    "10,000 single-row tx/s: $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (d["p50_ms"], d["p99_ms"], d["max_ms"]))' "$latency")"
}

for ((i = 1; i <= rounds; i++)); do
  round "$baseline" baseline
  round "$build" this-build
done
