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
# CPU per row for each, and a JSON summary in DIR/mq_bench.json. Ports: MariaDB
# 14281, RabbitMQ 14270..14279, canal-server 14260. Fails (exit 1) when a
# broker gets fewer than BENCH_MIN_MQ_ROWS_PER_S (default 30000) rows/s.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
build="$repo/build"
only=""
bench_args run_mq_bench --build-dir build --only only -- "$@"
bench_exclusive
min_rate=${BENCH_MIN_MQ_ROWS_PER_S:-30000}
work="$build/bench-mq"
bench="$build/bin/mq_bench"
server="$build/bin/canal-server"
mysql_port=14281
rabbit_port=14270
bench_built "$bench" "$server"

cleanup() {
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
run() {
  local out rate
  out=$("$bench" "$@" --server "$server" --work "$work" --mysql-port "$mysql_port" --first-file "$first") || {
    say "FAIL: $1: not every row arrived ($out)"; status=1; return; }
  say "$out"
  results+=("$out")
  rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["rows_per_s"]))' "$out")
  if [ "$rate" -lt "$min_rate" ]; then say "FAIL: $1: $rate rows/s < target $min_rate"; status=1; fi
}

if [ -z "$only" ] || [ "$only" = kafka ]; then
  run kafka
fi
if [ -z "$only" ] || [ "$only" = rabbitmq ]; then
  bash "$repo/scripts/rabbitmq-sandbox.sh" start --port "$rabbit_port" --dir "$work/rabbitmq-broker" >/dev/null
  run rabbitmq --rabbit-port "$rabbit_port"
fi
printf '[%s]\n' "$(IFS=,; echo "${results[*]}")" > "$build/mq_bench.json"
[ "$status" = 0 ] && say "targets met (figures in $build/mq_bench.json)"
exit "$status"
