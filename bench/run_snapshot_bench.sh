#!/usr/bin/env bash
# Snapshot benchmark: a destination's initial snapshot (canal.instance.snapshot.mode
# = initial, docs/snapshot.md) of a 1M-row table, end to end, against mariadb-dump
# of the same table in the same run. Release build.
#
#   bench/run_snapshot_bench.sh [--build-dir DIR] [--rows N] [--rounds N] [--port P]
#                               [--only narrow|wide] [--wide "2000x256 4x65536"]
#                               [--threads T] [--chunk-rows R] [--chunk-bytes B]
#
#   narrow  snap.orders: N (1,000,000) rows of 10 mixed-type columns (INT key,
#           BIGINT, INT UNSIGNED, DECIMAL, VARCHAR, utf8mb4 VARCHAR with NULLs,
#           DATETIME(3), TEXT, TINYINT, DOUBLE; 173 MiB in InnoDB), made with
#           INSERT ... SELECT from seq_1_to_N. --rounds (3) interleaved rounds of:
#           `mariadb-dump --single-transaction --quick snap orders` to /dev/null
#           (as canal over TCP, like the server's readers), then a fresh
#           canal-server install (destination 'bench', snapshot.mode initial,
#           filter snap\.orders, no cursor) and `canal-cli --count N` (canal-cli's
#           defaults otherwise: text to /dev/null, 1000-entry low-latency gets
#           with a 1 s timeout, each batch acked) from the server's start to
#           canal-cli's exit after printing and acking the last row. Each
#           contender is judged by its best round. Figures: rows/s of both and
#           their ratio, canal-server's CPU per row (/proc utime + stime at the
#           end), its peak RSS (VmHWM), mariadbd's CPU per row and bytes sent
#           for each, and where our wall time went (from the instance log: the
#           server's start to the snapshot's start, the snapshot's own time, its
#           end (the 'complete' line) to the client's last ack; a few ms below 0
#           when the ack came before the line). Targets: ours / mariadb-dump >=
#           BENCH_MIN_SNAPSHOT_DUMP_RATIO (1.0); peak RSS < BENCH_SNAPSHOT_MAX_RSS_MIB
#           (256); rows/s >= BENCH_MIN_SNAPSHOT_ROWS_PER_S (0: none, the ratio
#           is the target).
#   wide    for each ROWSxKIB of --wide (default "2000x256 4x65536": rows of
#           256 KiB, many to a chunk; rows of 64 MiB, each larger than a
#           chunk's byte bound): a table snap.w_KIBk of ROWS rows with a
#           LONGBLOB of KIB KiB, one mariadb-dump of it and one snapshot as
#           above (canal-cli --count ROWS). Figures: MiB/s of both, peak RSS,
#           and mariadbd's bytes sent per byte of values. Target: peak RSS <
#           BENCH_SNAPSHOT_MAX_RSS_MIB (256) whatever the row width.
#
# --threads, --chunk-rows, --chunk-bytes set canal.instance.snapshot.threads,
# .chunk.rows, .chunk.bytes (default: the server's, 2 / 8192 / 16 MiB) for
# trying others. Sandbox port P (default 16201; innodb_buffer_pool_size 1G so
# the tables stay in memory for both contenders, max_allowed_packet 1G),
# canal-server ports P+10 (narrow) and P+11 (wide), metrics endpoint off; all
# under DIR/bench-snapshot, stopped at the end. One line per figure, JSON in
# DIR/snapshot_bench.json; exit 1 when a bound is missed. A second run while one
# is going fails at once (bench_exclusive).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
# shellcheck source=bench/lib/install.sh
. "$repo/bench/lib/install.sh"
build="$repo/build"
rows=1000000
rounds=3
port=16201
only=""
wide="2000x256 4x65536"
threads="" chunk_rows="" chunk_bytes=""
bench_args run_snapshot_bench --build-dir build --rows rows --rounds rounds --port port --only only --wide wide \
  --threads threads --chunk-rows chunk_rows --chunk-bytes chunk_bytes -- "$@"
bench_exclusive
bad() { echo "run_snapshot_bench: $*" >&2; exit 2; }
[[ "$rows" =~ ^[1-9][0-9]*$ ]] || bad "--rows must be a positive integer"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || bad "--rounds must be a positive integer"
[[ "$port" =~ ^[1-9][0-9]*$ ]] && [ "$port" -le 65524 ] || bad "--port must be a TCP port (P to P+11 are used)"
case "$only" in ""|narrow|wide) ;; *) bad "--only takes narrow or wide" ;; esac
for w in $wide; do
  [[ "$w" =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[2]}" -lt 1048576 ] ||
    bad "--wide takes ROWSxKIB items (KiB per row below 1 GiB, max_allowed_packet), e.g. \"2000x256 4x65536\""
done
for v in threads chunk_rows chunk_bytes; do
  [ -z "${!v}" ] || [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || bad "--${v//_/-} must be a positive integer"
done
min_ratio=${BENCH_MIN_SNAPSHOT_DUMP_RATIO:-1.0}
max_rss=${BENCH_SNAPSHOT_MAX_RSS_MIB:-256}
min_rate=${BENCH_MIN_SNAPSHOT_ROWS_PER_S:-0}
work="$build/bench-snapshot"
server_bin="$build/bin/canal-server"
cli_bin="$build/bin/canal-cli"
sbdir=/tmp/canal-bench-mariadb-$port
bench_built "$server_bin" "$cli_bin"
command -v mariadb-dump >/dev/null 2>&1 || fail "mariadb-dump not installed (scripts/install-deps.sh)"
settings="threads ${threads:-default}, chunk.rows ${chunk_rows:-default}, chunk.bytes ${chunk_bytes:-default}"
say "targets: snapshot rows/s >= 1.0x mariadb-dump's (same table, same run), peak RSS < 256 MiB at any row width"
say "judged here against: ratio >= $min_ratio, RSS < $max_rss MiB, rows/s >= $min_rate (BENCH_MIN_SNAPSHOT_DUMP_RATIO," \
  "BENCH_SNAPSHOT_MAX_RSS_MIB, BENCH_MIN_SNAPSHOT_ROWS_PER_S); snapshot settings: $settings"

sandbox=(bash "$repo/scripts/mariadb-sandbox.sh")
sbargs=(--port "$port" --dir "$sbdir")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then stop_process "$server_pid" canal-server || true; fi
  "${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT

rm -rf "$work"
mkdir -p "$work"
"${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
"${sandbox[@]}" start "${sbargs[@]}" --option 'innodb_buffer_pool_size=1G' --option 'max_allowed_packet=1G' >/dev/null
sql=(mariadb --no-defaults --socket="$sbdir/mariadbd.sock" -uroot --batch --skip-column-names)
mysqld_pid=$(cat "$sbdir/mariadbd.pid")

# CPU seconds (user + system) process PID has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / hz }' "/proc/$1/stat"; }
bytes_sent() { "${sql[@]}" -e "SHOW GLOBAL STATUS LIKE 'Bytes_sent'" | awk '{print $2}'; }
now_ms() { date +%s%3N; }
# calc EXPR: awk arithmetic, printed as given by the format in EXPR's caller.
calc() { awk "BEGIN { $1 }"; }
TIMEFORMAT='%3R %3U %3S'

# dump_run TABLE [OPTION...]: mariadb-dump of snap.TABLE to /dev/null; sets d_s
# (wall), d_cpu (mariadb-dump's CPU), d_src_cpu (mariadbd's), d_src_bytes
# (mariadbd's bytes sent).
dump_run() {
  local table=$1 m0 b0 rc=0 u s
  shift
  warm_free_memory
  m0=$(cpu_s "$mysqld_pid")
  b0=$(bytes_sent)
  { time mariadb-dump --no-defaults -h127.0.0.1 -P"$port" -ucanal -pcanal --single-transaction --quick \
      "$@" snap "$table" > /dev/null 2> "$work/dump.err" || rc=$?; } 2> "$work/dump.time"
  [ "$rc" = 0 ] || fail "mariadb-dump of snap.$table failed (exit $rc): $(grep -v 'password on the command line' "$work/dump.err" | head -c 300)"
  d_src_cpu=$(calc "printf \"%.3f\", $(cpu_s "$mysqld_pid") - $m0")
  d_src_bytes=$(($(bytes_sent) - b0))
  read -r d_s u s < "$work/dump.time"
  d_cpu=$(calc "printf \"%.3f\", $u + $s")
}

# log_ms "YYYY-MM-DD HH:MM:SS.mmm": a log timestamp in ms since the epoch.
log_ms() { date -d "$1" +%s%3N; }

# snap_run NAME TABLE ROWS CANAL_PORT: a fresh install, snapshot.mode initial on
# snap.TABLE, canal-cli --count ROWS from the server's start to its exit. Sets
# s_s (wall), s_cpu (server CPU), s_hwm (peak RSS, MiB), s_cli_cpu, s_src_cpu,
# s_src_bytes, s_start_ms (server start -> snapshot start), s_read_s (the
# snapshot's own time, its log line), s_tail_ms (its 'complete' line -> the last ack).
snap_run() {
  local name=$1 table=$2 n=$3 cport=$4 root="$work/$1" m0 b0 t0 t1 rc=0 i u s log line
  bench_install "$root" "$cport" "$port"
  echo "canal.metrics.pull.port = 0" >> "$root/conf/canal.properties"
  {
    printf '%s\n' "canal.instance.filter.regex = snap\\\\.$table" "canal.instance.snapshot.mode = initial"
    [ -z "$threads" ] || echo "canal.instance.snapshot.threads = $threads"
    [ -z "$chunk_rows" ] || echo "canal.instance.snapshot.chunk.rows = $chunk_rows"
    [ -z "$chunk_bytes" ] || echo "canal.instance.snapshot.chunk.bytes = $chunk_bytes"
  } >> "$root/conf/bench/instance.properties"
  # A server left by an interrupted run would answer canal-cli instead of this run's, which
  # cannot bind the port: canal-cli would then wait out its timeout on a stream that never comes.
  if (: < "/dev/tcp/127.0.0.1/$cport") 2>/dev/null; then
    fail "$name: port $cport already accepts connections (a canal-server of an interrupted run? find it with: ss -ltnp 'sport = :$cport')"
  fi
  warm_free_memory
  m0=$(cpu_s "$mysqld_pid")
  b0=$(bytes_sent)
  t0=$(now_ms)
  ${BENCH_SERVER_WRAPPER:-} "$server_bin" --conf "$root/conf" --logs "$root/logs" > "$root/stdout.log" 2>&1 &
  server_pid=$!
  # canal-cli does not retry its first connect: wait for the port (counted in the time).
  for ((i = 0; i < 3000; i++)); do
    (: < "/dev/tcp/127.0.0.1/$cport") 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || fail "$name: canal-server exited at start: $(tail -c 400 "$root/stdout.log")"
    sleep 0.02
  done
  { time timeout 600 "$cli_bin" --address "127.0.0.1:$cport" --destination bench --count "$n" \
      > /dev/null 2> "$root/cli.err" || rc=$?; } 2> "$root/cli.time"
  t1=$(now_ms)
  [ "$rc" = 0 ] || fail "$name: canal-cli failed (exit $rc: $(head -c 300 "$root/cli.err"); canal-server log: $root/logs)"
  s_cpu=$(cpu_s "$server_pid")
  s_hwm=$(($(awk '$1 == "VmHWM:" {print $2}' "/proc/$server_pid/status") / 1024))
  s_src_cpu=$(calc "printf \"%.3f\", $(cpu_s "$mysqld_pid") - $m0")
  s_src_bytes=$(($(bytes_sent) - b0))
  local pid=$server_pid
  server_pid=""
  stop_process "$pid" canal-server || fail "canal-server hung on SIGTERM (stacks above; its log: $root/logs)"
  read -r _ u s < "$root/cli.time"
  s_cli_cpu=$(calc "printf \"%.3f\", $u + $s")
  s_s=$(calc "printf \"%.3f\", ($t1 - $t0) / 1000")
  log="$root/logs/bench/bench.log"
  line=$(grep -m1 ' complete: ' "$log" || true)
  [[ "$line" == *" $n rows sent in "* ]] || fail "$name: the instance log has no 'complete: ... $n rows sent' line ($log)"
  s_read_s=$(sed -n 's/.* rows sent in \([0-9.]*\) s .*/\1/p' <<< "$line")
  s_tail_ms=$((t1 - $(log_ms "$(cut -d' ' -f1-2 <<< "$line")")))
  s_start_ms=$(($(log_ms "$(grep -m1 ' tables to read, ' "$log" | cut -d' ' -f1-2)") - t0))
}

status=0
results=()
# ge A B: A >= B (decimals).
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
rate() { calc "printf \"%.0f\", $1 / $2"; }

if [ -z "$only" ] || [ "$only" = narrow ]; then
  say "narrow: inserting $rows rows into snap.orders (10 columns)"
  t=$SECONDS
  "${sql[@]}" --default-character-set=utf8mb4 <<EOF
SET SESSION sql_log_bin = 0;
CREATE DATABASE IF NOT EXISTS snap;
CREATE TABLE snap.orders (
  id INT NOT NULL PRIMARY KEY,
  customer_id BIGINT NOT NULL,
  quantity INT UNSIGNED NOT NULL,
  amount DECIMAL(12,2) NOT NULL,
  sku VARCHAR(64) NOT NULL,
  title VARCHAR(255) NULL,
  created_at DATETIME(3) NOT NULL,
  note TEXT NULL,
  status TINYINT NOT NULL,
  score DOUBLE NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
USE snap;
INSERT INTO snap.orders
SELECT n, n * 7919 - 4000000000,
       (n * 2654435761) % 4294967296,
       ((n * 37) % 2000000) / 100 - 5000,
       CONCAT('SKU-', LPAD(n % 100000, 6, '0'), '-', CHAR(65 + n % 26)),
       IF(n % 10 = 0, NULL, CONCAT('Order ', n, ' ', REPEAT('é', n % 7), ' ', LEFT(MD5(n), 8 + n % 24))),
       TIMESTAMP('2024-01-01 00:00:00') + INTERVAL n SECOND + INTERVAL (n % 1000) * 1000 MICROSECOND,
       IF(n % 4 = 0, NULL, REPEAT(SUBSTRING(MD5(n), 1, 16), 1 + n % 8)),
       n % 256 - 128,
       IF(n % 9 = 0, NULL, n / 7.0 - 1000)
FROM (SELECT CAST(seq AS SIGNED) AS n FROM seq_1_to_$rows) AS s;
EOF
  have=$("${sql[@]}" -e "SELECT COUNT(*) FROM snap.orders")
  [ "$have" = "$rows" ] || fail "snap.orders has $have rows, expected $rows"
  say "narrow: inserted in $((SECONDS - t)) s"

  best_d="" best_s="" best_cpu="" peak=0 d_json="" s_json=""
  for ((round = 1; round <= rounds; round++)); do
    dump_run orders
    line="{\"round\":$round,\"seconds\":$d_s,\"rows_per_s\":$(rate "$rows" "$d_s"),\"dump_cpu_s\":$d_cpu,\"mariadbd_cpu_us_per_row\":$(calc "printf \"%.3f\", $d_src_cpu * 1e6 / $rows"),\"mariadbd_bytes_sent\":$d_src_bytes}"
    d_json+="${d_json:+,}$line"
    say "narrow round $round: mariadb-dump $d_s s, $(rate "$rows" "$d_s") rows/s (mariadb-dump CPU $d_cpu s," \
      "mariadbd CPU $(calc "printf \"%.2f\", $d_src_cpu * 1e6 / $rows") µs/row, $((d_src_bytes >> 20)) MiB sent)"
    if [ -z "$best_d" ] || ge "$best_d" "$d_s"; then best_d=$d_s; fi

    snap_run "narrow-$round" orders "$rows" $((port + 10))
    cpu_row=$(calc "printf \"%.3f\", $s_cpu * 1e6 / $rows")
    line="{\"round\":$round,\"seconds\":$s_s,\"rows_per_s\":$(rate "$rows" "$s_s"),\"server_cpu_us_per_row\":$cpu_row,\"peak_rss_mib\":$s_hwm,\"cli_cpu_s\":$s_cli_cpu,\"mariadbd_cpu_us_per_row\":$(calc "printf \"%.3f\", $s_src_cpu * 1e6 / $rows"),\"mariadbd_bytes_sent\":$s_src_bytes,\"start_to_snapshot_ms\":$s_start_ms,\"snapshot_s\":$s_read_s,\"snapshot_end_to_last_ack_ms\":$s_tail_ms}"
    s_json+="${s_json:+,}$line"
    say "narrow round $round: snapshot $s_s s, $(rate "$rows" "$s_s") rows/s (server CPU $cpu_row µs/row," \
      "peak RSS $s_hwm MiB, canal-cli CPU $s_cli_cpu s, mariadbd CPU" \
      "$(calc "printf \"%.2f\", $s_src_cpu * 1e6 / $rows") µs/row, $((s_src_bytes >> 20)) MiB sent; server start ->" \
      "snapshot start $s_start_ms ms, snapshot $s_read_s s, snapshot end -> last ack $s_tail_ms ms)"
    if [ -z "$best_s" ] || ge "$best_s" "$s_s"; then best_s=$s_s; fi
    if [ -z "$best_cpu" ] || ge "$best_cpu" "$cpu_row"; then best_cpu=$cpu_row; fi
    [ "$s_hwm" -le "$peak" ] || peak=$s_hwm
  done
  d_rate=$(rate "$rows" "$best_d")
  s_rate=$(rate "$rows" "$best_s")
  ratio=$(calc "printf \"%.2f\", $best_d / $best_s")
  line="{\"mode\":\"narrow\",\"rows\":$rows,\"rows_per_s\":$s_rate,\"dump_rows_per_s\":$d_rate,\"ratio\":$ratio,\"server_cpu_us_per_row\":$best_cpu,\"peak_rss_mib\":$peak,\"snapshot\":[$s_json],\"dump\":[$d_json]}"
  results+=("$line")
  say "rows/s: snapshot $s_rate, mariadb-dump $d_rate (best of $rounds each): ${ratio}x" \
    "(target >= 1.0, bound $min_ratio)"
  say "server CPU per row: $best_cpu µs (lowest of $rounds)"
  say "server peak RSS: $peak MiB (highest of $rounds; target < 256, bound $max_rss)"
  if ! ge "$ratio" "$min_ratio"; then say "FAIL: snapshot / mariadb-dump ${ratio}x < $min_ratio"; status=1; fi
  if [ "$s_rate" -lt "$min_rate" ]; then say "FAIL: snapshot $s_rate rows/s < $min_rate"; status=1; fi
  if [ "$peak" -ge "$max_rss" ]; then say "FAIL: narrow: peak RSS $peak MiB >= $max_rss MiB"; status=1; fi
fi

if [ -z "$only" ] || [ "$only" = wide ]; then
  for w in $wide; do
    n=${w%x*} kib=${w#*x}
    table="w_${kib}k"
    mib=$(calc "printf \"%.1f\", $n * $kib / 1024")
    say "wide: inserting $n rows of a $kib KiB LONGBLOB into snap.$table ($mib MiB of values)"
    "${sql[@]}" -e "SET SESSION sql_log_bin = 0; CREATE DATABASE IF NOT EXISTS snap; USE snap;
      CREATE TABLE $table (id INT NOT NULL PRIMARY KEY, k BIGINT NOT NULL, v LONGBLOB NOT NULL) ENGINE=InnoDB;
      INSERT INTO $table SELECT seq, seq * 31, REPEAT(MD5(seq), $kib * 32) FROM seq_1_to_$n;"
    have=$("${sql[@]}" -e "SELECT COUNT(*) FROM snap.$table WHERE LENGTH(v) = $kib * 1024")
    [ "$have" = "$n" ] || fail "snap.$table has $have rows of $kib KiB, expected $n"
    value_bytes=$((n * kib * 1024))
    dump_run "$table" --max-allowed-packet=1G
    snap_run "wide-$table" "$table" "$n" $((port + 11))
    amp=$(calc "printf \"%.2f\", $s_src_bytes / $value_bytes")
    d_mibs=$(calc "printf \"%.1f\", $mib / $d_s")
    s_mibs=$(calc "printf \"%.1f\", $mib / $s_s")
    line="{\"mode\":\"wide\",\"rows\":$n,\"row_kib\":$kib,\"seconds\":$s_s,\"mib_per_s\":$s_mibs,\"dump_seconds\":$d_s,\"dump_mib_per_s\":$d_mibs,\"server_cpu_s\":$s_cpu,\"peak_rss_mib\":$s_hwm,\"mariadbd_bytes_sent\":$s_src_bytes,\"mariadbd_bytes_sent_per_value_byte\":$amp,\"dump_mariadbd_bytes_sent\":$d_src_bytes,\"snapshot_s\":$s_read_s,\"snapshot_end_to_last_ack_ms\":$s_tail_ms}"
    results+=("$line")
    say "wide $n x $kib KiB: snapshot $s_s s ($s_mibs MiB/s; server CPU $s_cpu s; mariadbd sent" \
      "$((s_src_bytes >> 20)) MiB, ${amp}x the values; snapshot end -> last ack $s_tail_ms ms), mariadb-dump $d_s s" \
      "($d_mibs MiB/s, $((d_src_bytes >> 20)) MiB sent)"
    say "wide $n x $kib KiB: server peak RSS $s_hwm MiB (target < 256, bound $max_rss)"
    if [ "$s_hwm" -ge "$max_rss" ]; then say "FAIL: wide $n x $kib KiB: peak RSS $s_hwm MiB >= $max_rss MiB"; status=1; fi
    "${sql[@]}" -e "DROP TABLE snap.$table"
  done
fi

printf '[%s]\n' "$(IFS=,; echo "${results[*]}")" > "$build/snapshot_bench.json"
[ "$status" = 0 ] && say "all bounds met (figures in $build/snapshot_bench.json)"
exit "$status"
