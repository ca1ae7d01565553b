#!/usr/bin/env bash
# Administrative commands for canal-server.
#
#   bin/canal-admin.sh list
#   bin/canal-admin.sh stop|start|restart DESTINATION
#   bin/canal-admin.sh rebuild-schema-history DESTINATION [--data-dir DIR]
#   bin/canal-admin.sh snapshot DESTINATION SCHEMA.TABLE... [--where SQL] [--wait SECONDS]
#   bin/canal-admin.sh cursor DESTINATION (--position FILE:OFFSET | --time TIME | --gtid GTID) [--client ID] [--dry-run]
#   bin/canal-admin.sh config DESTINATION [--set FILE [--dry-run]]
#   bin/canal-admin.sh log DESTINATION [--lines N]
#   bin/canal-admin.sh hash-password        (the password from the terminal or stdin)
#   bin/canal-admin.sh cluster
#   bin/canal-admin.sh drain SERVER [--wait SECONDS] [--undo]
#   bin/canal-admin.sh move DESTINATION SERVER|--unpin
#
# cluster, drain, move (a balanced cluster, canal.cluster.placement = balanced,
# docs/cluster.md; ask any of its servers): cluster prints the leader, each
# server's destinations and load, the assignment and the destinations that run
# nowhere with why. drain SERVER (ip:port as in ZooKeeper) moves every
# destination off that server, for a rolling restart, and waits (60 s unless
# --wait) until it runs none, saying so; --undo ends the drain. move pins
# DESTINATION to SERVER (the leader moves it there while that server can run
# it); --unpin lets the leader place it again.
#
# rebuild-schema-history (the server stopped): moves the destination's schema history
# (DIR/DESTINATION/schema_history.json) aside, to schema_history.json.<UTC time>.
# The next start takes a fresh snapshot of every table in the destination's
# filter from the primary, at the primary's position at that moment
# (docs/schema-history.md, "Recovering"). DIR defaults to canal.file.data.dir
# from conf/canal.properties, else conf/ beside bin/. Refuses while the server
# runs (bin/canal.pid names a live canal-server).
#
# list, stop, start, restart (the server running): call its admin API
# (docs/admin.md) on canal.metrics.pull.port of conf/canal.properties, with
# curl. list prints the destinations as JSON (state, position, lag, clients,
# mode). stop holds a destination stopped (in a ZooKeeper pair the other
# server takes it over); start starts it from its instance.properties as it
# is now; restart does both. They send the token of canal.admin.token or
# canal.admin.tokenFile (or $CANAL_ADMIN_TOKEN). Exit 0 when the server did
# it, 1 when it refused or failed (its reason printed), 2 on bad usage.
#
# cursor (the server running): moves the cursors of the destination's clients
# (or one client's) to a binlog position, to the first transaction at or after
# a time (anything `date -d` reads, e.g. "2026-12-06 10:00 UTC"), or to a MariaDB
# GTID position; the destination restarts there. --dry-run only prints, per
# client, what the move would deliver again ("repeat") or skip, counted from the
# primary's binlog. config prints the destination's instance.properties, or with
# --set FILE checks FILE with the server's own parser, writes it and restarts
# the destination with it (--dry-run: check only). log prints the last lines of
# the destination's log (100 unless --lines).
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

[ $# -ge 1 ] || usage
command=$1
shift
props="$home/conf/canal.properties"

# The last value of key $1 in conf/canal.properties ("" when unset), blanks trimmed.
prop() {
  [ -f "$props" ] || return 0
  local key=${1//./\\.}
  sed -n "s/^[[:space:]]*$key[[:space:]]*[=:][[:space:]]*//p" "$props" | tail -n 1 | sed 's/[[:space:]]*$//'
}

# The "key" string field of the JSON in $2 ("" when absent); escapes kept.
json_field() {
  printf '%s' "$2" | sed -nE 's/.*"'"$1"'":"(([^"\\]|\\.)*)".*/\1/p' | head -n 1
}

# api METHOD PATH [BODY]: calls the admin API; the reply's body in $reply, its status in $code.
api() {
  local method=$1 path=$2 body=${3:-'{}'} port host token="" token_file curl_args out rc
  command -v curl >/dev/null 2>&1 || { say "curl is missing (apt-get install curl)"; exit 1; }
  port=$(prop canal.metrics.pull.port); port=${port:-11112}
  if [ "$port" = 0 ]; then
    say "the admin API is off: canal.metrics.pull.port = 0 in $props (it serves on that port)"
    exit 1
  fi
  host=$(prop canal.metrics.pull.ip); [ -n "$host" ] || host=$(prop canal.ip)
  case "$host" in
    ''|0.0.0.0) host=127.0.0.1 ;;
    ::) host='[::1]' ;;
    *:*) host="[$host]" ;;
  esac
  if [ "$method" = POST ] || [ "$(prop canal.admin.readRequiresToken)" = true ] || [ "${needs_token:-}" = 1 ]; then
    token=${CANAL_ADMIN_TOKEN:-$(prop canal.admin.token)}
    token_file=$(prop canal.admin.tokenFile)
    if [ -z "$token" ] && [ -n "$token_file" ]; then
      case "$token_file" in /*) ;; *) token_file="$home/conf/$token_file" ;; esac
      [ -r "$token_file" ] || { say "cannot read the admin token file $token_file (canal.admin.tokenFile)"; exit 1; }
      token=$(head -n 1 "$token_file" | tr -d '[:space:]')
    fi
    if [ -z "$token" ]; then
      say "no admin token: set canal.admin.token or canal.admin.tokenFile in $props (docs/admin.md), restart the server, and ask again"
      exit 1
    fi
  fi
  out=$(mktemp) || exit 1
  curl_args=(-sS --max-time 60 -o "$out" -w '%{http_code}' -X "$method")
  [ "$method" = POST ] && curl_args+=(-H 'Content-Type: application/json' --data-binary "$body")
  # The token goes through curl's config on stdin, not its command line
  # (which any user can read in ps).
  code=$({ [ -z "$token" ] || printf 'header = "Authorization: Bearer %s"\n' "$token"; } | curl -K - "${curl_args[@]}" "http://$host:$port$path" 2>"$out.err")
  rc=$?
  reply=$(cat "$out" 2>/dev/null)
  if [ $rc -ne 0 ]; then
    if ! { [ -f "$bin_dir/canal.pid" ] && is_canal_server "$(cat "$bin_dir/canal.pid" 2>/dev/null)"; }; then
      say "canal-server is not running here (no live bin/canal.pid); start it (bin/startup.sh) and ask again"
    else
      say "cannot reach the admin API at http://$host:$port: $(cat "$out.err")"
    fi
    rm -f "$out" "$out.err"
    exit 1
  fi
  rm -f "$out" "$out.err"
}

# get_json PATH [WHAT]: prints the admin API's JSON at PATH and exits 0; exits 1 when refused,
# saying "[WHAT ]refused (CODE): ERROR".
get_json() {
  api GET "$1"
  if [ "$code" != 200 ]; then say "${2:+$2 }refused ($code): $(json_field error "$reply")"; exit 1; fi
  printf '%s\n' "$reply"
  exit 0
}

case "$command" in
  list)
    [ $# -eq 0 ] || usage
    get_json /api/destinations
    ;;
  stop|start|restart)
    [ $# -eq 1 ] || usage
    case "$1" in
      ''|*/*|.|..) say "'$1' is not a destination name"; exit 2 ;;
    esac
    api POST "/api/destinations/$1/$command"
    state=$(printf '%s' "$reply" | grep -oE '"state":"[a-z]+"' | head -n 1 | cut -d'"' -f4)
    case "$code" in
      200) say "$command $1: $(json_field result "$reply"); state now ${state:-unknown}"; exit 0 ;;
      401) say "the admin token was refused ($(json_field error "$reply")): check canal.admin.token / canal.admin.tokenFile"; exit 1 ;;
      *) say "$command $1 refused or failed ($code): $(json_field error "$reply")${state:+; state now $state}"; exit 1 ;;
    esac
    ;;
  cluster)
    [ $# -eq 0 ] || usage
    get_json /api/cluster cluster
    ;;
  drain)
    [ $# -ge 1 ] || usage
    server=$1; shift
    wait_s=60 undo=false
    while [ $# -gt 0 ]; do
      case "$1" in
        --wait) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || usage; wait_s=$2; shift 2 ;;
        --undo) undo=true; shift ;;
        *) usage ;;
      esac
    done
    [[ "$server" =~ ^[^/[:space:]]+:[0-9]+$ ]] || { say "'$server' is not a server (ip:port, as 'cluster' lists them)"; exit 2; }
    if [ "$undo" = true ]; then body="{\"server\":\"$server\",\"drain\":false}"; else body="{\"server\":\"$server\",\"drain\":true}"; fi
    api POST /api/cluster/drain "$body"
    if [ "$code" != 200 ]; then say "drain $server refused ($code): $(json_field error "$reply")"; exit 1; fi
    if [ "$undo" = true ]; then say "drain of $server ended: the leader may give it destinations again"; exit 0; fi
    say "draining $server: its destinations move to the other servers"
    deadline=$((SECONDS + wait_s))
    while :; do
      api GET /api/cluster
      left=$(printf '%s' "$reply" | python3 -c 'import json,sys; a=json.load(sys.stdin).get("assignment",{}); print(sum(1 for s in a.values() if s==sys.argv[1]))' "$server" 2>/dev/null)
      if [ "$code" = 200 ] && [ "${left:-x}" = 0 ]; then say "$server is empty: it runs no destination (restart it, then: drain $server --undo)"; exit 0; fi
      if [ $SECONDS -ge $deadline ]; then say "$server still has ${left:-?} destination(s) after $wait_s s (see: cluster)"; exit 1; fi
      sleep 1
    done
    ;;
  move)
    [ $# -eq 2 ] || usage
    case "$1" in ''|*/*|.|..) say "'$1' is not a destination name"; exit 2 ;; esac
    if [ "$2" = --unpin ]; then server=""; else server=$2; [[ "$server" =~ ^[^/[:space:]]+:[0-9]+$ ]] || { say "'$server' is not a server (ip:port)"; exit 2; }; fi
    api POST /api/cluster/move "{\"destination\":\"$1\",\"server\":\"$server\"}"
    if [ "$code" != 200 ]; then say "move $1 refused ($code): $(json_field error "$reply")"; exit 1; fi
    say "$(json_field result "$reply")"
    exit 0
    ;;
  hash-password)
    # Prints a password as canal.passwd and canal.users.file keep it: 40 hex
    # digits of SHA1(SHA1(password)). Read from the terminal (not echoed) or
    # stdin, never argv (ps shows that to every user).
    [ $# -eq 0 ] || usage
    command -v openssl >/dev/null 2>&1 || { say "openssl is missing"; exit 1; }
    if [ -t 0 ]; then IFS= read -rs -p "password: " pw; echo >&2; else IFS= read -r pw; fi
    [ -n "${pw:-}" ] || { say "no password given"; exit 2; }
    printf %s "$pw" | openssl sha1 -binary | openssl sha1 | awk '{print $NF}'
    exit 0
    ;;
esac

# The value of JSON field $1 of the reply, decoded (python3 is installed with the server).
reply_field() {
  printf '%s' "$reply" | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); sys.stdout.write(v if isinstance(v,str) else json.dumps(v, indent=2) + "\n")' "$1"
}

[ $# -ge 1 ] || usage
dest=$1
shift
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

case "$command" in
  cursor)
    kind="" value="" client="" dry=false
    while [ $# -gt 0 ]; do
      case "$1" in
        --position|--time|--gtid|--client) [ $# -ge 2 ] || usage
          if [ "$1" = --client ]; then client=$2; else [ -z "$kind" ] || usage; kind=${1#--}; value=$2; fi
          shift 2 ;;
        --dry-run) dry=true; shift ;;
        *) usage ;;
      esac
    done
    [ -n "$kind" ] || { say "say where to: --position FILE:OFFSET, --time TIME or --gtid GTID"; usage; }
    case "$kind" in
      position)
        file=${value%:*} offset=${value##*:}
        [ "$file" != "$value" ] && [[ "$offset" =~ ^[0-9]+$ ]] || { say "--position wants FILE:OFFSET, e.g. mysql-bin.000003:4"; exit 2; }
        body="{\"journal\":$(json_string "$file"),\"offset\":$offset" ;;
      time)
        ms=$(date -d "$value" +%s%3N 2>/dev/null) || { say "cannot read the time '$value' (date -d reads it)"; exit 2; }
        body="{\"timestamp_ms\":$ms" ;;
      gtid) body="{\"gtid\":$(json_string "$value")" ;;
    esac
    [ -z "$client" ] || body+=",\"client_id\":$(json_string "$client")"
    body+=",\"dryRun\":$dry}"
    api POST "/api/destinations/$dest/cursor" "$body"
    if [ "$code" != 200 ]; then say "cursor $dest refused ($code): $(json_field error "$reply")"; exit 1; fi
    printf '%s\n' "$reply" | python3 -m json.tool
    exit 0
    ;;
  config)
    set_file="" dry=false
    while [ $# -gt 0 ]; do
      case "$1" in
        --set) [ $# -ge 2 ] || usage; set_file=$2; shift 2 ;;
        --dry-run) dry=true; shift ;;
        *) usage ;;
      esac
    done
    if [ -z "$set_file" ]; then
      needs_token=1 api GET "/api/destinations/$dest/config"
      if [ "$code" != 200 ]; then say "config $dest refused ($code): $(json_field error "$reply")"; exit 1; fi
      reply_field text
      exit 0
    fi
    [ -r "$set_file" ] || { say "cannot read $set_file"; exit 2; }
    body=$(python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read(), "dryRun": sys.argv[2] == "true"}))' "$set_file" "$dry") || exit 1
    api POST "/api/destinations/$dest/config" "$body"
    if [ "$code" != 200 ]; then say "config $dest refused ($code): $(json_field error "$reply")"; exit 1; fi
    say "config $dest: $(json_field result "$reply")"
    exit 0
    ;;
  log)
    lines=100
    while [ $# -gt 0 ]; do
      case "$1" in
        --lines) [ $# -ge 2 ] || usage; lines=$2; shift 2 ;;
        *) usage ;;
      esac
    done
    [[ "$lines" =~ ^[0-9]+$ ]] || usage
    needs_token=1 api GET "/api/destinations/$dest/log?lines=$lines"
    if [ "$code" != 200 ]; then say "log $dest refused ($code): $(json_field error "$reply")"; exit 1; fi
    reply_field text
    exit 0
    ;;
esac

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
