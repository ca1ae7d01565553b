# shellcheck shell=bash
# A fresh canal-server install root for the bench scripts (sourced, not run).
#
#   bench_install ROOT CANAL_PORT MYSQL_PORT [JOURNAL POSITION]
#
# Empties ROOT and writes ROOT/conf/canal.properties (127.0.0.1:CANAL_PORT,
# the one destination 'bench', no auto scan) and
# ROOT/conf/bench/instance.properties (the primary 127.0.0.1:MYSQL_PORT as
# canal/canal; from JOURNAL:POSITION when given, else from the primary's
# end). The caller adds its own keys after, and starts the server with
# `canal-server --conf ROOT/conf --logs ROOT/logs`.
bench_install() {
  local root=$1 canal_port=$2 mysql_port=$3
  rm -rf "$root"
  mkdir -p "$root/conf/bench"
  printf 'canal.ip = 127.0.0.1\ncanal.port = %s\ncanal.destinations = bench\ncanal.auto.scan = false\n' \
    "$canal_port" > "$root/conf/canal.properties"
  printf 'canal.instance.master.address = 127.0.0.1:%s\ncanal.instance.dbUsername = canal\ncanal.instance.dbPassword = canal\n' \
    "$mysql_port" > "$root/conf/bench/instance.properties"
  if [ $# -ge 5 ]; then
    printf 'canal.instance.master.journal.name = %s\ncanal.instance.master.position = %s\n' "$4" "$5" \
      >> "$root/conf/bench/instance.properties"
  fi
}
