#!/usr/bin/env bash
# Makes the benchmark binlog: a ROW-format MariaDB binlog holding >= 1,000,000
# inserted rows of a 10-column mixed-type table.
#
#   bench/gen_bench_binlog.sh [OUT_DIR] [--rows N] [--batch B] [--port P] [--keep-server]
#
# OUT_DIR defaults to build/bench-data. Starts its own sandbox (port 13399,
# dir /tmp/canal-bench-mariadb-PORT, wiped before and after), inserts the rows as
# N/B autocommitted INSERT ... SELECT statements of B rows each (default 1000;
# so the binlog has many transactions and many rows events, as a real workload
# would; --batch 1 makes single-row transactions),
# flushes and copies the binlog files to OUT_DIR, and writes OUT_DIR/MANIFEST
# (rows, bytes, files, server version). OUT_DIR/MANIFEST is written last, so
# its presence means the data is complete.
#
# --keep-server: start the sandbox again after the copy and leave it running
# (same data and binlogs), for the catch-up benchmark that streams them from
# it; the caller stops it (mariadb-sandbox.sh stop --port P --dir
# /tmp/canal-bench-mariadb-P --wipe).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib/args.sh
. "$repo/bench/lib/args.sh"
out="$repo/build/bench-data"
rows=1000000
batch=1000
port=13399
keep=0
bench_args gen_bench_binlog --keep-server keep=1 --rows rows --batch batch --port port OUT_DIR out -- "$@"
# OUT_DIR is wiped before the copy: an empty one would name the current directory.
[ -n "$out" ] || { echo "gen_bench_binlog: OUT_DIR must not be empty" >&2; exit 2; }
if ! [[ "$batch" =~ ^[1-9][0-9]*$ ]]; then
  echo "gen_bench_binlog: --batch must be a positive integer" >&2
  exit 2
fi
if ! [[ "$rows" =~ ^[0-9]+$ ]] || [ "$rows" -lt "$batch" ] || [ $((rows % batch)) -ne 0 ]; then
  echo "gen_bench_binlog: --rows must be a positive multiple of $batch" >&2
  exit 2
fi
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

sandbox=(bash "$repo/scripts/mariadb-sandbox.sh")
sbdir="/tmp/canal-bench-mariadb-$port"
sbargs=(--port "$port" --dir "$sbdir")
cleanup() {
  if [ "$keep" = 1 ] && [ -f "$out/MANIFEST" ]; then return; fi
  "${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT

# A fresh server, so the binlog holds only this workload.
"${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
binlog_dir=$("${sandbox[@]}" start "${sbargs[@]}")
client=(mariadb --no-defaults --socket="$sbdir/mariadbd.sock" -uroot --default-character-set=utf8mb4
        --batch --skip-column-names)

"${client[@]}" <<'EOF'
CREATE DATABASE bench;
CREATE TABLE bench.orders (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
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
EOF

echo "gen_bench_binlog: inserting $rows rows in $((rows / batch)) transactions of $batch" >&2
start=$SECONDS
# Values are functions of the row number n: varied widths and signs, some
# NULLs, multi-byte text, so the decoder sees realistic values, not constants.
insert_rows_sql="INSERT INTO bench.orders (customer_id, quantity, amount, sku, title, created_at, note, status, score)
SELECT n * 7919 - 4000000000,
       (n * 2654435761) % 4294967296,
       ((n * 37) % 2000000) / 100 - 5000,
       CONCAT('SKU-', LPAD(n % 100000, 6, '0'), '-', CHAR(65 + n % 26)),
       IF(n % 10 = 0, NULL, CONCAT('Order ', n, ' ', REPEAT('é', n % 7), ' ', LEFT(MD5(n), 8 + n % 24))),
       TIMESTAMP('2024-01-01 00:00:00') + INTERVAL n SECOND + INTERVAL (n % 1000) * 1000 MICROSECOND,
       IF(n % 4 = 0, NULL, REPEAT(SUBSTRING(MD5(n), 1, 16), 1 + n % 8)),
       n % 256 - 128,
       IF(n % 9 = 0, NULL, n / 7.0 - 1000)"
if [ "$batch" = 1 ]; then
  # Single-row transactions: a loop inside the server (one autocommitted
  # INSERT per row), since 200,000 client round trips take minutes.
  "${client[@]}" <<EOF
DELIMITER //
CREATE PROCEDURE bench.fill_single(IN lo BIGINT, IN hi BIGINT)
BEGIN
  DECLARE n BIGINT DEFAULT lo;
  WHILE n <= hi DO
    $insert_rows_sql FROM (SELECT n) AS s;
    SET n = n + 1;
  END WHILE;
END //
DELIMITER ;
CALL bench.fill_single(1, $rows);
DROP PROCEDURE bench.fill_single;
EOF
else
  # seq_A_to_B (SEQUENCE engine) resolves in the current database; its
  # unsigned seq is cast so that arithmetic may go negative.
  {
    echo "USE bench;"
    for ((i = 0; i < rows / batch; i++)); do
      echo "$insert_rows_sql FROM (SELECT CAST(seq AS SIGNED) AS n FROM seq_$((i * batch + 1))_to_$(((i + 1) * batch))) AS s;"
    done
  } | "${client[@]}"
fi
"${client[@]}" -e "FLUSH BINARY LOGS"
inserted=$("${client[@]}" -e "SELECT COUNT(*) FROM bench.orders")
version=$("${client[@]}" -e "SELECT VERSION()")
echo "gen_bench_binlog: $inserted rows in $((SECONDS - start)) s" >&2
if [ "$inserted" != "$rows" ]; then
  echo "gen_bench_binlog: expected $rows rows, table has $inserted" >&2
  exit 1
fi
# A clean shutdown, so no file is left flagged in use.
"${sandbox[@]}" stop "${sbargs[@]}" >&2

rm -rf "$out"
mkdir -p "$out"
files=()
for f in "$binlog_dir"/mariadb-bin.[0-9]*; do
  cp "$f" "$out/"
  files+=("$(basename "$f")")
done
bytes=$(cat "$out"/mariadb-bin.[0-9]* | wc -c)
# Written out now, not while something is timed: an fdatasync on ext4 commits the
# journal, which first writes back other files' dirty data, so a benchmark right after
# a copy of hundreds of MiB paid for it in its cursor writes (latency stalls of
# 100-700 ms; docs/performance-journal.md, entry 25).
sync
{
  echo "rows=$rows"
  echo "bytes=$bytes"
  echo "files=${files[*]}"
  echo "server=$version"
  echo "table=bench.orders (10 columns)"
  echo "batch=$batch"
} > "$out/MANIFEST.tmp"
mv "$out/MANIFEST.tmp" "$out/MANIFEST"
echo "gen_bench_binlog: wrote ${files[*]} ($bytes bytes) to $out" >&2
if [ "$keep" = 1 ]; then
  "${sandbox[@]}" start "${sbargs[@]}" >/dev/null
  echo "gen_bench_binlog: sandbox left running on 127.0.0.1:$port (dir $sbdir)" >&2
fi
