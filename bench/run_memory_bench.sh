#!/usr/bin/env bash
# Memory benchmarks: canal-server's RSS with default settings (16384-slot,
# 16 MiB ring) for a huge transaction and for a huge value. Release build.
#
#   bench/run_memory_bench.sh [--build-dir DIR] [--rows N] [--only txn|blob|idle] [--port P]
#                             [--blob-mib "64 256"] [--idle-destinations N]
#
#   txn   one transaction of N (6,000,000) small rows, made in MariaDB with
#         INSERT ... SELECT from the seq_1_to_N table (SEQUENCE engine). Read
#         by a fast client (e2e_client catchup: every row, acked at once) and,
#         on a fresh server, by a slow one (e2e_client slow: 20 rows per get,
#         50 ms pause, for 15 s). For each: canal-server's peak RSS (VmHWM)
#         and its RSS 10 s after the client is done (sampled every 0.5 s: the
#         first second it is under the after-bound). Targets: peak under
#         BENCH_TXN_MAX_RSS_MIB (256), after under BENCH_TXN_MAX_RSS_AFTER_MIB
#         (64) within 10 s.
#   blob  one row with a 64 MiB LONGBLOB, end to end: canal-cli --count 1
#         --json must print it whole (output over 64 MiB); canal-server's peak
#         RSS under BENCH_BLOB_MAX_RSS_MIB (256). With --blob-mib, one row of
#         each size (MiB, up to 1023: the sandbox's max_allowed_packet is 1G),
#         each on a fresh server; the bound scales with the size (bound x
#         size / 64). Each line has "peak_per_row": server peak / row size,
#         the number of copies of the row the server held at once (plus its
#         baseline).
#   idle  what an idle destination costs: one canal-server with N (100)
#         destinations on the sandbox, none with a client, all streaming (each
#         instance log has loaded its schema history); RSS and threads before
#         the destinations start (the server with none) and after, per
#         destination. Bounds: BENCH_IDLE_MAX_MIB_PER_DEST (4) and
#         BENCH_IDLE_MAX_THREADS_PER_DEST (4); measured 0.23 MiB and 3 threads
#         (the parser, its binlog read-ahead, the instance's status loop).
#
# Sandbox port P (default 14701; max_allowed_packet 1G, max_connections 500), canal-server ports
# P+10 to P+12, all under DIR/bench-memory; stopped at the end. One JSON line per figure and
# DIR/memory_bench.json; exit 1 when a bound is missed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
# shellcheck source=bench/lib/install.sh
. "$repo/bench/lib/install.sh"
build="$repo/build"
rows=6000000
only=""
port=14701
blob_sizes="64"
idle_dests=100
bench_args run_memory_bench --build-dir build --rows rows --only only --port port --blob-mib blob_sizes \
  --idle-destinations idle_dests -- "$@"
bench_exclusive
[[ "$rows" =~ ^[1-9][0-9]*$ ]] || { echo "run_memory_bench: --rows must be a positive integer" >&2; exit 2; }
[[ "$idle_dests" =~ ^[1-9][0-9]*$ ]] && [ "$idle_dests" -le 240 ] ||
  { echo "run_memory_bench: --idle-destinations must be 1 to 240 (two connections each under max_connections 500)" >&2; exit 2; }
case "$only" in ""|txn|blob|idle) ;; *) echo "run_memory_bench: --only takes txn, blob or idle" >&2; exit 2 ;; esac
[[ "$port" =~ ^[1-9][0-9]*$ ]] && [ "$port" -le 65523 ] ||
  { echo "run_memory_bench: --port must be a TCP port (P to P+12 are used)" >&2; exit 2; }
for b in $blob_sizes; do
  [[ "$b" =~ ^[1-9][0-9]*$ ]] && [ "$b" -le 1023 ] ||
    { echo "run_memory_bench: --blob-mib takes sizes in MiB from 1 to 1023 (max_allowed_packet 1G)" >&2; exit 2; }
done
max_peak=${BENCH_TXN_MAX_RSS_MIB:-256}
max_after=${BENCH_TXN_MAX_RSS_AFTER_MIB:-64}
max_blob=${BENCH_BLOB_MAX_RSS_MIB:-256}
max_idle_mib=${BENCH_IDLE_MAX_MIB_PER_DEST:-4}
max_idle_threads=${BENCH_IDLE_MAX_THREADS_PER_DEST:-4}
work="$build/bench-memory"
server_bin="$build/bin/canal-server"
client_bin="$build/bin/e2e_client"
cli_bin="$build/bin/canal-cli"
sbdir=/tmp/canal-bench-mariadb-$port
bench_built "$server_bin" "$client_bin" "$cli_bin"
say "targets: peak RSS < 256 MiB for a ${rows}-row transaction (fast and slow client)," \
  "RSS < 64 MiB within 10 s after; peak RSS < 256 MiB for a 64 MiB row (rows of: $blob_sizes MiB)"
say "judged here against: ${max_peak} / ${max_after} / ${max_blob} MiB (BENCH_TXN_MAX_RSS_MIB," \
  "BENCH_TXN_MAX_RSS_AFTER_MIB, BENCH_BLOB_MAX_RSS_MIB)"

sandbox=(bash "$repo/scripts/mariadb-sandbox.sh")
sbargs=(--port "$port" --dir "$sbdir")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then stop_process "$server_pid" canal-server || true; fi
  "${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT

"${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
"${sandbox[@]}" start "${sbargs[@]}" --option 'max_allowed_packet=1G' --option 'max_connections=500' >/dev/null
sql=(mariadb --no-defaults --socket="$sbdir/mariadbd.sock" -uroot --batch --skip-column-names)
# The binlog position a server should start at to read what comes next.
master_status() { "${sql[@]}" -e "SHOW MASTER STATUS" | awk '{print $1, $2}'; }

# start_server NAME CANAL_PORT FILE POS: a fresh install root, destination
# 'bench' from FILE:POS with default memory settings; sets server_pid.
start_server() {
  local root="$work/$1"
  bench_install "$root" "$2" "$port" "$3" "$4"
  # BENCH_SERVER_WRAPPER (e.g. "heaptrack -o FILE"): to find where the memory goes
  # (the RSS figures are then the wrapper's, and meaningless).
  ${BENCH_SERVER_WRAPPER:-} "$server_bin" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  server_pid=$!
}
stop_server() {
  local pid=$server_pid
  server_pid=""
  stop_process "$pid" canal-server || fail "canal-server hung on SIGTERM (stacks above; its log: $work)"
}
status_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$server_pid/status"; }
# Seconds (0.5 s steps, at most 10) until RSS is under the after-bound; sets
# settle_s (11 when it never was) and rss_after_mib (the last sample).
settle() {
  local i kib
  settle_s=11
  for ((i = 0; i <= 20; i++)); do
    kib=$(status_kib VmRSS)
    rss_after_mib=$((kib / 1024))
    if [ "$rss_after_mib" -lt "$max_after" ]; then settle_s=$(awk -v i="$i" 'BEGIN {print i / 2}'); return; fi
    sleep 0.5
  done
}

status=0
results=()
# judge NAME ROWS_READ PEAK_MIB [ROWS_PER_S]: records a txn figure and checks both bounds.
judge() {
  local rate=""
  [ -n "${4:-}" ] && rate=",\"rows_per_s\":$4"
  local line="{\"mode\":\"$1\",\"rows\":$rows,\"rows_read\":$2$rate,\"peak_rss_mib\":$3,\"rss_after_mib\":$rss_after_mib,\"seconds_to_under_${max_after}_mib\":$settle_s}"
  say "$line"
  say "$1: peak RSS $3 MiB (target < 256, bound $max_peak); RSS $rss_after_mib MiB $(
    [ "$settle_s" = 11 ] && echo "still after 10 s" || echo "after ${settle_s} s") (target < 64 within 10 s," \
    "bound $max_after)"
  results+=("$line")
  if [ "$3" -ge "$max_peak" ]; then say "FAIL: $1: peak RSS $3 MiB >= $max_peak MiB"; status=1; fi
  if [ "$settle_s" = 11 ]; then
    say "FAIL: $1: RSS still $rss_after_mib MiB (>= $max_after MiB) 10 s after the client was done"
    status=1
  fi
}

if [ -z "$only" ] || [ "$only" = txn ]; then
  read -r file pos < <(master_status)
  say "txn: inserting $rows rows in one transaction"
  t=$SECONDS
  "${sql[@]}" -e "CREATE DATABASE m; CREATE TABLE m.t (id BIGINT PRIMARY KEY, a INT, b VARCHAR(32)) ENGINE=InnoDB;
    USE m; INSERT INTO m.t SELECT seq, seq * 3, CONCAT('row-', seq) FROM seq_1_to_$rows;"
  say "txn: inserted in $((SECONDS - t)) s"

  start_server txn-fast $((port + 10)) "$file" "$pos"
  out=$("$client_bin" catchup --address 127.0.0.1:$((port + 10)) --destination bench --rows "$rows") ||
    fail "txn fast: e2e_client failed (canal-server log: $work/txn-fast/logs)"
  peak=$(($(status_kib VmHWM) / 1024))
  settle
  stop_server
  # (rows/s from the server's start: the catch-up through the ring, for A/B runs)
  judge txn_fast_client "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows"])' "$out")" "$peak" \
    "$(python3 -c 'import json,sys; print(round(json.loads(sys.argv[1])["rows_per_s"]))' "$out")"

  start_server txn-slow $((port + 11)) "$file" "$pos"
  out=$("$client_bin" slow --address 127.0.0.1:$((port + 11)) --destination bench --batch 20 --pause-ms 50 --seconds 15) ||
    fail "txn slow: e2e_client failed (canal-server log: $work/txn-slow/logs)"
  peak=$(($(status_kib VmHWM) / 1024))
  settle
  stop_server
  judge txn_slow_client "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows"])' "$out")" "$peak"
fi

if [ -z "$only" ] || [ "$only" = blob ]; then
  "${sql[@]}" -e "CREATE DATABASE IF NOT EXISTS m; CREATE TABLE m.b (id INT PRIMARY KEY, v LONGBLOB) ENGINE=InnoDB;"
  id=0
  for blob_mib in $blob_sizes; do
    id=$((id + 1))
    read -r file pos < <(master_status)
    say "blob: inserting one row with a $blob_mib MiB LONGBLOB"
    "${sql[@]}" -e "INSERT INTO m.b VALUES ($id, REPEAT('x', $blob_mib * 1024 * 1024));"
    start_server "blob-$blob_mib" $((port + 12)) "$file" "$pos"
    out="$work/blob-$blob_mib-cli.json"
    # canal-cli does not retry its first connect: wait for the port.
    for ((i = 0; i < 300; i++)); do
      (exec 3<>"/dev/tcp/127.0.0.1/$((port + 12))") 2>/dev/null && break
      sleep 0.1
    done
    rc=0
    timeout $((120 + blob_mib)) "$cli_bin" --address 127.0.0.1:$((port + 12)) --destination bench --count 1 --json \
      > "$out" 2> "$work/blob-$blob_mib-cli.err" || rc=$?
    peak=$(($(status_kib VmHWM) / 1024))
    stop_server
    bytes=$(wc -c < "$out")
    rm -f "$out"  # up to a GiB
    bound=$((max_blob * blob_mib / 64))
    [ "$bound" -ge "$max_blob" ] || bound=$max_blob
    ratio=$(awk -v p="$peak" -v r="$blob_mib" 'BEGIN {printf "%.2f", p / r}')
    line="{\"mode\":\"blob\",\"value_mib\":$blob_mib,\"client_rc\":$rc,\"client_output_bytes\":$bytes,\"peak_rss_mib\":$peak,\"peak_per_row\":$ratio}"
    say "$line"
    say "blob: $blob_mib MiB row: peak RSS $peak MiB, server peak / row size $ratio (target < 256 MiB for 64 MiB," \
      "bound $bound)"
    results+=("$line")
    if [ "$rc" != 0 ] || [ "$bytes" -lt $((blob_mib << 20)) ]; then
      say "FAIL: blob: canal-cli did not print the $blob_mib MiB row (exit $rc; $(head -c 300 "$work/blob-$blob_mib-cli.err"))"
      status=1
    fi
    if [ "$peak" -ge "$bound" ]; then say "FAIL: blob: $blob_mib MiB row: peak RSS $peak MiB >= $bound MiB"; status=1; fi
  done
fi

if [ -z "$only" ] || [ "$only" = idle ]; then
  # One server, idle_dests destinations, no client: the cost of a destination that waits.
  root="$work/idle"
  read -r file pos < <(master_status)
  bench_install "$root" "$((port + 10))" "$port" "$file" "$pos"
  names=$(seq -s, -f 'idle%03g' 1 "$idle_dests")
  sed -i "s/^canal.destinations = .*/canal.destinations = $names/" "$root/conf/canal.properties"
  echo "canal.metrics.pull.port = 0" >> "$root/conf/canal.properties"
  for d in $(seq -f 'idle%03g' 1 "$idle_dests"); do
    mkdir -p "$root/conf/$d"
    cp "$root/conf/bench/instance.properties" "$root/conf/$d/"
    echo "canal.instance.filter.regex = idle\\\\.$d" >> "$root/conf/$d/instance.properties"
  done
  rm -rf "$root/conf/bench"
  "$server_bin" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  server_pid=$!
  # Streaming: every instance log has loaded its schema history (wait on that, 60 s at most).
  for ((i = 0; i < 600; i++)); do
    up=$( { grep -l ' table(s) as of ' "$root"/logs/idle*/idle*.log 2>/dev/null || true; } | wc -l)
    [ "$up" -ge "$idle_dests" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "idle: canal-server exited (its log: $root/logs)"
    sleep 0.1
  done
  [ "$up" -ge "$idle_dests" ] || fail "idle: only $up of $idle_dests destinations streaming after 60 s (logs: $root/logs)"
  rss_kib=$(status_kib VmRSS)
  threads=$(status_kib Threads)
  stop_server
  # The same server with no destination: what the destinations add is the difference.
  root0="$work/idle-none"
  bench_install "$root0" "$((port + 11))" "$port"
  sed -i "s/^canal.destinations = .*/canal.destinations =/" "$root0/conf/canal.properties"
  echo "canal.metrics.pull.port = 0" >> "$root0/conf/canal.properties"
  rm -rf "$root0/conf/bench"
  "$server_bin" --conf "$root0/conf" --logs "$root0/logs" > "$root0/stdout.log" 2>&1 &
  server_pid=$!
  for ((i = 0; i < 100; i++)); do
    grep -q 'canal-server started' "$root0/logs/canal/canal.log" 2>/dev/null && break
    sleep 0.1
  done
  base_kib=$(status_kib VmRSS)
  base_threads=$(status_kib Threads)
  stop_server
  per_mib=$(awk -v a="$rss_kib" -v b="$base_kib" -v n="$idle_dests" 'BEGIN { printf "%.2f", (a - b) / 1024 / n }')
  per_threads=$(awk -v a="$threads" -v b="$base_threads" -v n="$idle_dests" 'BEGIN { printf "%.2f", (a - b) / n }')
  line="{\"mode\":\"idle\",\"destinations\":$idle_dests,\"rss_mib\":$((rss_kib / 1024)),\"threads\":$threads,\"base_rss_mib\":$((base_kib / 1024)),\"base_threads\":$base_threads,\"mib_per_destination\":$per_mib,\"threads_per_destination\":$per_threads}"
  results+=("$line")
  say "$line"
  say "idle: $idle_dests destinations streaming, no client: RSS $((rss_kib / 1024)) MiB, $threads threads (the server" \
    "alone: $((base_kib / 1024)) MiB, $base_threads threads): $per_mib MiB and $per_threads threads per destination" \
    "(bounds $max_idle_mib MiB, $max_idle_threads threads)"
  if awk -v x="$per_mib" -v m="$max_idle_mib" 'BEGIN { exit !(x > m) }'; then
    say "FAIL: idle: $per_mib MiB per destination > $max_idle_mib"; status=1
  fi
  if awk -v x="$per_threads" -v m="$max_idle_threads" 'BEGIN { exit !(x > m) }'; then
    say "FAIL: idle: $per_threads threads per destination > $max_idle_threads"; status=1
  fi
fi

printf '[%s]\n' "$(IFS=,; echo "${results[*]}")" > "$build/memory_bench.json"
[ "$status" = 0 ] && say "all bounds met (figures in $build/memory_bench.json)"
exit "$status"
