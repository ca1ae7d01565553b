#!/usr/bin/env bash
# Quick start on a fresh Debian 12 machine:
#
#   bash scripts/quickstart.sh        (as root; as another user: sudo bash ...)
#
# Installs the dependencies, builds (Release), starts a throwaway MariaDB
# (scripts/mariadb-sandbox.sh, 127.0.0.1:$QUICKSTART_PORT, default 13306, ROW
# binlog), starts canal-server with the shipped conf/ (its `example`
# destination points at that sandbox) through bin/startup.sh, runs a small
# write workload, and shows the example client (build/bin/simple_client)
# printing each transaction and row change as Canal's example client does.
# Server and sandbox keep running afterwards; the last lines say how to stop
# them. Run it again at any time: it starts from a fresh sandbox and cursor.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
port=${QUICKSTART_PORT:-13306}
sbdir="/tmp/canal-quickstart-mariadb-$port"
sandbox=(bash "$repo/scripts/mariadb-sandbox.sh")
sbargs=(--port "$port" --dir "$sbdir")
canal_port=11111

banner() { printf '\n==== %s\n' "$*"; }

banner "1/6 installing dependencies (Debian packages)"
bash scripts/install-deps.sh

banner "2/6 building canal-server, the client SDK and its example (Release, build/)"
bash scripts/build.sh --release --target canal-server simple_client canal-cli

banner "3/6 starting a sandbox MariaDB on 127.0.0.1:$port (ROW binlog, FULL row metadata)"
# A running server from an earlier quick start holds a cursor into the old
# sandbox: stop it, and start both from scratch.
bash bin/stop.sh >/dev/null 2>&1 || true
"${sandbox[@]}" stop "${sbargs[@]}" --wipe >/dev/null 2>&1 || true
"${sandbox[@]}" start "${sbargs[@]}" >/dev/null
rm -f conf/example/meta.dat

banner "4/6 starting canal-server (bin/startup.sh, conf/, destination 'example' on port $canal_port)"
if [ "$port" != 13306 ]; then export CANAL_INSTANCE_MASTER_ADDRESS="127.0.0.1:$port"; fi
bash bin/startup.sh
# The instance starts streaming at the binlog's current end; wait until it does.
for _ in $(seq 1 100); do
  grep -q "starting from" logs/example/example.log 2>/dev/null && break
  sleep 0.1
done

banner "5/6 the example client subscribes; a small workload runs"
client_out=$(mktemp)
build/bin/simple_client "127.0.0.1:$canal_port" example >"$client_out" 2>&1 &
client_pid=$!
trap 'kill -INT $client_pid 2>/dev/null || true; rm -f "$client_out"' EXIT
sql=(mariadb --no-defaults --socket="$sbdir/mariadbd.sock" -uroot --default-character-set=utf8mb4 --verbose)
"${sql[@]}" <<'SQL'
CREATE DATABASE shop;
CREATE TABLE shop.customer (
  id INT PRIMARY KEY AUTO_INCREMENT,
  name VARCHAR(64) NOT NULL,
  balance DECIMAL(10,2) NOT NULL DEFAULT 0,
  joined DATETIME(3) NOT NULL,
  tier ENUM('basic','gold') NOT NULL DEFAULT 'basic'
);
INSERT INTO shop.customer (name, balance, joined) VALUES
  ('Ada', 120.50, '2024-03-01 09:30:00.250'),
  ('Grace', 0, '2024-03-02 10:00:00'),
  ('Zoë', -15.75, '2024-03-03 11:45:10.5');
UPDATE shop.customer SET balance = balance + 100, tier = 'gold' WHERE name = 'Ada';
DELETE FROM shop.customer WHERE name = 'Grace';
ALTER TABLE shop.customer ADD COLUMN email VARCHAR(128) NULL AFTER name;
INSERT INTO shop.customer (name, email, joined) VALUES ('Linus', 'linus@example.org', NOW(3));
SQL

banner "6/6 what the example client printed"
# The last INSERT is the last change: wait until the client has shown it.
for _ in $(seq 1 100); do
  grep -q "linus@example.org" "$client_out" && break
  sleep 0.1
done
kill -INT "$client_pid" 2>/dev/null || true
wait "$client_pid" 2>/dev/null || true
cat "$client_out"
grep -q "linus@example.org" "$client_out" || { echo "quickstart: the client did not receive the workload; see logs/" >&2; exit 1; }

cat <<EOF

That is the whole path: MariaDB's binlog -> canal-server (a replica of the
sandbox) -> Canal's protocol on port $canal_port -> the C++ client SDK. Any Canal
client can subscribe to destination 'example' the same way.

Still running:
  canal-server  logs in logs/canal/canal.log and logs/example/example.log
                stop it with:  bash bin/stop.sh
                its state:     http://127.0.0.1:11112/status (and /metrics for Prometheus)
  MariaDB       127.0.0.1:$port (root via --socket=$sbdir/mariadbd.sock)
                stop it with:  bash scripts/mariadb-sandbox.sh stop --port $port --dir $sbdir --wipe
Try:  build/bin/canal-cli --address 127.0.0.1:$canal_port --destination example --json
Next: 'bash scripts/test.sh' (as root) runs the whole test suite.
EOF
