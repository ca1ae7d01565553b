#!/usr/bin/env bash
# MQ-mode benchmark: canal-server publishing 1,000,000 already-written rows
# (bench/gen_bench_binlog.sh) as flat messages to Kafka (librdkafka's mock
# cluster, 3 brokers, inside build/bin/mq_bench) and to RabbitMQ
# (scripts/rabbitmq-sandbox.sh). The end is when the destination's cursor,
# which moves only behind the broker's confirmations, stops moving; RabbitMQ's
# queue is then drained and its rows counted (bench/mq_bench.cc).
#
#   bench/run_mq_bench.sh [--build-dir DIR] [--only kafka|rabbitmq]
#
# Prints rows/s (server start to the last cursor move) and canal-server's
# CPU per row for each, and a JSON summary in DIR/mq_bench.json. The same run
# first reads the same binlog over the TCP path (canal-server + `canal-cli
# --count N --batch 4096`, server start to the client's exit), and each
# broker's rows/s is printed as a ratio of it (targets: Kafka >= 0.5, Kafka
# with canal.mq.transaction >= 0.35, RabbitMQ >= 0.3; CI gates only on
# BENCH_MIN_MQ_TCP_RATIO, default 0.1).
# Ports: MariaDB 14281, RabbitMQ 14270..14279, canal-server 14260 (MQ) and
# 14261 (TCP). Fails (exit 1) when a broker gets fewer than
# BENCH_MIN_MQ_ROWS_PER_S (default 30000) rows/s or under the ratio bound.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
build="$repo/build"
only=""
bench_args run_mq_bench --build-dir build --only only -- "$@"
bench_exclusive
min_rate=${BENCH_MIN_MQ_ROWS_PER_S:-30000}
min_tcp_ratio=${BENCH_MIN_MQ_TCP_RATIO:-0.1}
# shellcheck source=bench/lib/install.sh
. "$repo/bench/lib/install.sh"
work="$build/bench-mq"
bench="$build/bin/mq_bench"
server="$build/bin/canal-server"
mysql_port=14281
rabbit_port=14270
cli="$build/bin/canal-cli"
bench_built "$bench" "$server" "$cli"

tcp_pid=""
cleanup() {
  if [ -n "$tcp_pid" ]; then kill "$tcp_pid" 2>/dev/null || true; fi
  bash "$repo/scripts/mariadb-sandbox.sh" stop --port "$mysql_port" --dir "/tmp/canal-bench-mariadb-$mysql_port" \
    --wipe >/dev/null 2>&1 || true
  bash "$repo/scripts/rabbitmq-sandbox.sh" stop --port "$rabbit_port" --dir "$work/rabbitmq-broker" --wipe \
    >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "generating 1,000,000 rows on a sandbox (port $mysql_port)"
bash "$repo/bench/gen_bench_binlog.sh" "$work/data-1m" --port "$mysql_port" --keep-server
first=$(sed -n 's/^files=\([^ ]*\).*/\1/p' "$work/data-1m/MANIFEST")

results=()
status=0
# The TCP path on the same binlog: what the brokers' rows/s are judged against.
tcp_rate=0
tcp_root="$work/tcp"
bench_install "$tcp_root" 14261 "$mysql_port" "$first" 4
# Its own replica id: the brokers' servers (destination 'bench' too) must not meet its dump
# thread on the primary, which lingers until its next write fails.
echo "canal.instance.mysql.slaveId = 4261" >> "$tcp_root/conf/bench/instance.properties"
warm_free_memory
t0=$(date +%s%3N)
"$server" --conf "$tcp_root/conf" --logs "$tcp_root/logs" > "$tcp_root/stdout.log" 2>&1 &
tcp_pid=$!
for ((i = 0; i < 3000; i++)); do
  (: < /dev/tcp/127.0.0.1/14261) 2>/dev/null && break
  sleep 0.02
done
if "$cli" --address 127.0.0.1:14261 --destination bench --count 1000000 --batch 4096 > /dev/null; then
  t1=$(date +%s%3N)
  tcp_rate=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 1000000 / ((b - a) / 1000) }')
  say "{\"path\":\"tcp\",\"rows\":1000000,\"seconds\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }'),\"rows_per_s\":$tcp_rate}"
  results+=("{\"path\":\"tcp\",\"rows\":1000000,\"rows_per_s\":$tcp_rate}")
else
  say "FAIL: the TCP reference (canal-cli) did not read every row"; status=1
fi
stop_process "$tcp_pid" canal-server || true
tcp_pid=""
# run NAME TARGET mq_bench-arguments...
run() {
  local name=$1 target=$2 out rate
  shift 2
  out=$("$bench" "$@" --server "$server" --work "$work" --mysql-port "$mysql_port" --first-file "$first") || {
    say "FAIL: $name: not every row arrived ($out)"; status=1; return; }
  say "$out"
  results+=("$out")
  rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["rows_per_s"]))' "$out")
  if [ "$rate" -lt "$min_rate" ]; then say "FAIL: $name: $rate rows/s < target $min_rate"; status=1; fi
  if [ "$tcp_rate" -gt 0 ]; then
    local ratio
    ratio=$(awk -v a="$rate" -v b="$tcp_rate" 'BEGIN { printf "%.2f", a / b }')
    say "$name: ${ratio}x the TCP path's rows/s ($rate vs $tcp_rate; target >= $target, bound $min_tcp_ratio)"
    if awk -v r="$ratio" -v m="$min_tcp_ratio" 'BEGIN { exit !(r < m) }'; then
      say "FAIL: $name: ${ratio}x the TCP path < bound $min_tcp_ratio"; status=1
    fi
  fi
}

if [ -z "$only" ] || [ "$only" = kafka ]; then
  run kafka 0.5 kafka
  run kafka-transactions 0.35 kafka --transaction
fi
if [ -z "$only" ] || [ "$only" = rabbitmq ]; then
  bash "$repo/scripts/rabbitmq-sandbox.sh" start --port "$rabbit_port" --dir "$work/rabbitmq-broker" >/dev/null
  run rabbitmq 0.3 rabbitmq --rabbit-port "$rabbit_port"
fi
printf '[%s]\n' "$(IFS=,; echo "${results[*]}")" > "$build/mq_bench.json"
[ "$status" = 0 ] && say "targets met (figures in $build/mq_bench.json)"
exit "$status"
