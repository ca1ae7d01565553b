#!/usr/bin/env bash
# Administrative commands for a stopped canal-server.
#
#   bin/canal-admin.sh rebuild-schema-history DESTINATION [--data-dir DIR]
#
# rebuild-schema-history: moves the destination's schema history
# (DIR/DESTINATION/schema_history.json) aside, to schema_history.json.<UTC time>.
# The next start takes a fresh snapshot of every table in the destination's
# filter from the primary, at the primary's position at that moment
# (docs/schema-history.md, "Recovering"). DIR defaults to canal.file.data.dir
# from conf/canal.properties, else conf/ beside bin/. Refuses while the server
# runs (bin/canal.pid names a live canal-server).
set -u

bin_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
home=$(cd "$bin_dir/.." && pwd)
say() { echo "canal-admin.sh: $*"; }
usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
  exit 2
}

# shellcheck source=bin/canal-common.sh
. "$bin_dir/canal-common.sh"

[ $# -ge 2 ] || usage
command=$1 dest=$2
shift 2
data_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || usage; data_dir=$2; shift 2 ;;
    --data-dir=*) data_dir=${1#--data-dir=}; shift ;;
    *) usage ;;
  esac
done
[ "$command" = rebuild-schema-history ] || { say "unknown command '$command'"; usage; }
case "$dest" in
  ''|*/*|.|..) say "'$dest' is not a destination name"; exit 2 ;;
esac

if [ -z "$data_dir" ]; then
  props="$home/conf/canal.properties"
  if [ -f "$props" ]; then
    data_dir=$(sed -n 's/^[[:space:]]*canal\.file\.data\.dir[[:space:]]*[=:][[:space:]]*//p' "$props" | tail -n 1)
  fi
  data_dir=${data_dir:-$home/conf}
  case "$data_dir" in /*) ;; *) data_dir="$home/$data_dir" ;; esac
fi

pid_file="$bin_dir/canal.pid"
if [ -f "$pid_file" ] && is_canal_server "$(cat "$pid_file" 2>/dev/null)"; then
  say "canal-server is running (pid $(cat "$pid_file")); stop it first (bin/stop.sh)"
  exit 1
fi

history="$data_dir/$dest/schema_history.json"
if [ ! -f "$history" ]; then
  say "no schema history at $history: the next start of '$dest' takes a snapshot anyway"
  exit 0
fi
aside="$history.$(date -u +%Y%m%dT%H%M%SZ)"
mv "$history" "$aside" || exit 1
say "moved $history to $aside; the next start of '$dest' snapshots the primary's tables at its current position"
