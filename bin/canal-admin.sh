#!/usr/bin/env bash
# Administrative commands for canal-server.
#
#   bin/canal-admin.sh rebuild-schema-history DESTINATION [--data-dir DIR]
#   bin/canal-admin.sh snapshot DESTINATION SCHEMA.TABLE... [--where SQL] [--wait SECONDS]
#
# rebuild-schema-history (the server stopped): moves the destination's schema history
# (DIR/DESTINATION/schema_history.json) aside, to schema_history.json.<UTC time>.
# The next start takes a fresh snapshot of every table in the destination's
# filter from the primary, at the primary's position at that moment
# (docs/schema-history.md, "Recovering"). DIR defaults to canal.file.data.dir
# from conf/canal.properties, else conf/ beside bin/. Refuses while the server
# runs (bin/canal.pid names a live canal-server).
#
# snapshot (the server running): reads the named tables again, while the stream
# goes on and without locks, and sends their rows to the destination's clients as
# snapshot rows (docs/snapshot.md); --where limits the rows (one condition, as in a
# WHERE clause). The request goes to conf/DESTINATION/snapshot.request; the server
# answers within a second in conf/DESTINATION/snapshot.result, printed here: the
# snapshot's id, or why it was refused (a table outside the filter, missing,
# without SELECT, already being read, a bad --where). Exit 0 when accepted.
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
case "$dest" in
  ''|*/*|.|..) say "'$dest' is not a destination name"; exit 2 ;;
esac

# JSON string of $1 (quotes, backslashes and control characters escaped).
json_string() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case "$c" in
      '"') out+='\"' ;;
      '\') out+='\\' ;;
      $'\n') out+='\n' ;;
      $'\t') out+='\t' ;;
      $'\r') out+='\r' ;;
      *) out+=$c ;;
    esac
  done
  printf '"%s"' "$out"
}

if [ "$command" = snapshot ]; then
  tables=() where="" wait_s=30
  while [ $# -gt 0 ]; do
    case "$1" in
      --where) [ $# -ge 2 ] || usage; where=$2; shift 2 ;;
      --where=*) where=${1#--where=}; shift ;;
      --wait) [ $# -ge 2 ] || usage; wait_s=$2; shift 2 ;;
      -*) usage ;;
      *) tables+=("$1"); shift ;;
    esac
  done
  [ ${#tables[@]} -gt 0 ] || { say "name at least one SCHEMA.TABLE"; usage; }
  pid_file="$bin_dir/canal.pid"
  if ! { [ -f "$pid_file" ] && is_canal_server "$(cat "$pid_file" 2>/dev/null)"; }; then
    say "canal-server is not running here (no live bin/canal.pid); start it (bin/startup.sh) and ask again"
    exit 1
  fi
  dir="$home/conf/$dest"
  [ -d "$dir" ] || { say "no destination '$dest' here ($dir does not exist)"; exit 1; }
  body='{"tables":['
  sep=""
  for t in "${tables[@]}"; do body+="$sep$(json_string "$t")"; sep=","; done
  body+="],\"where\":$(json_string "$where")}"
  rm -f "$dir/snapshot.result"
  printf '%s\n' "$body" > "$dir/snapshot.request.tmp" && mv "$dir/snapshot.request.tmp" "$dir/snapshot.request" || exit 1
  for ((i = 0; i < wait_s * 10; i++)); do
    if [ -f "$dir/snapshot.result" ]; then
      answer=$(cat "$dir/snapshot.result")
      rm -f "$dir/snapshot.result"
      say "$answer"
      case "$answer" in accepted*) exit 0 ;; *) exit 1 ;; esac
    fi
    sleep 0.1
  done
  rm -f "$dir/snapshot.request"
  say "no answer from destination '$dest' in $wait_s s: is it active on this server (a ZooKeeper pair runs it on one of two)? See logs/$dest/$dest.log"
  exit 1
fi

data_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || usage; data_dir=$2; shift 2 ;;
    --data-dir=*) data_dir=${1#--data-dir=}; shift ;;
    *) usage ;;
  esac
done
[ "$command" = rebuild-schema-history ] || { say "unknown command '$command'"; usage; }

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
