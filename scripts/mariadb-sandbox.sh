#!/usr/bin/env bash
# A throwaway MariaDB server for tests, the benchmark and the quick start.
#
#   mariadb-sandbox.sh start|stop|restart|kill|status [--port N] [--dir D] [--wipe]
#       [--binlog-format ROW|MIXED|STATEMENT] [--row-metadata FULL|MINIMAL]
#       [--option 'name=value']...
#
# Uses Debian's mariadb-server binaries with a private config: 127.0.0.1 only,
# ROW binlogs with FULL row image and FULL row metadata, server_id=1, utf8mb4.
# Everything lives under --dir (default /tmp/canal-mariadb-PORT): data/, binlog/,
# my.cnf, the socket, the pid file and error.log.
#
# --binlog-format and --row-metadata (defaults ROW and FULL) set binlog_format
# and binlog_row_metadata; each --option adds one line to [mariadbd] (a later
# line wins). my.cnf is rewritten on every start, so a restart can change them.
#
# start   initialises the data dir if needed, starts the server, waits (bounded)
#         until it answers, creates the replication user canal/canal, and prints
#         the binlog directory alone on stdout (messages go to stderr), so
#         `dir=$(mariadb-sandbox.sh start)` works. Already running: says so.
# stop    shuts the server down cleanly and waits; --wipe also deletes --dir.
# restart stop, then start with the same data and binlogs (and the options given
#         now); prints the binlog directory like start.
# kill    SIGKILLs the server (a crash: the last binlog stays marked in use) and
#         waits until it is gone.
# status  prints pid, port, socket and binlog dir; exit 0 running, 3 stopped.
#
# Connect as root (no password) through the socket:
#   mariadb --socket=D/mariadbd.sock -uroot
# or as the replication user over TCP:
#   mariadb -h127.0.0.1 -PN -ucanal -pcanal

# shellcheck source=scripts/sandbox-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/sandbox-common.sh"
sandbox_timeouts 30 60

# Debian keeps the server in /usr/sbin, which is not on a normal user's PATH.
find_tool() {
  local name
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    if [ -x "/usr/sbin/$name" ]; then echo "/usr/sbin/$name"; return 0; fi
  done
  return 1
}

binlog_format=ROW
row_metadata=FULL
extra_options=()
parse_extra_arg() {
  case "$1" in
    --binlog-format) [ $# -ge 2 ] || usage; binlog_format=$2; taken=2 ;;
    --binlog-format=*) binlog_format=${1#--binlog-format=}; taken=1 ;;
    --row-metadata) [ $# -ge 2 ] || usage; row_metadata=$2; taken=2 ;;
    --row-metadata=*) row_metadata=${1#--row-metadata=}; taken=1 ;;
    --option) [ $# -ge 2 ] || usage; extra_options+=("$2"); taken=2 ;;
    --option=*) extra_options+=("${1#--option=}"); taken=1 ;;
  esac
}
parse_sandbox_args 13306 65535 /tmp/canal-mariadb "$@"
binlog_format=${binlog_format^^}
row_metadata=${row_metadata^^}
case "$binlog_format" in ROW|MIXED|STATEMENT) ;; *) die "bad --binlog-format: $binlog_format (ROW, MIXED or STATEMENT)" ;; esac
case "$row_metadata" in FULL|MINIMAL) ;; *) die "bad --row-metadata: $row_metadata (FULL or MINIMAL)" ;; esac
# One my.cnf line each: a newline would smuggle in more lines (or sections).
for opt in ${extra_options[@]+"${extra_options[@]}"}; do
  case "$opt" in
    *$'\n'*|*$'\r'*) die "bad --option (contains a newline): $opt" ;;
    ''|=*|'['*) die "bad --option: '$opt' (want 'name=value' or 'name')" ;;
  esac
done

readonly cnf="$dir/my.cnf"
readonly sock="$dir/mariadbd.sock"
readonly pidfile="$dir/mariadbd.pid"
readonly errlog="$dir/error.log"
readonly binlog_dir="$dir/binlog"
# Marks a directory this script created, so --wipe never deletes anything else.
readonly marker="$dir/.canal-mariadb-sandbox"

user_args=()
if [ "$(id -u)" = "0" ]; then user_args=(--user=root); fi

running_pid() { pid_alive_from "$pidfile"; }

admin() {
  local tool
  tool=$(find_tool mariadb-admin mysqladmin) || die "mariadb-admin not found (install mariadb-client)"
  "$tool" --no-defaults --socket="$sock" -uroot --connect-timeout=2 "$@"
}

sql() {
  local tool
  tool=$(find_tool mariadb mysql) || die "mariadb client not found (install mariadb-client)"
  "$tool" --no-defaults --socket="$sock" -uroot --default-character-set=utf8mb4 "$@"
}

show_error_log() {
  if [ -f "$errlog" ]; then
    log "last lines of $errlog:"
    tail -n 25 "$errlog" >&2 || true
  fi
}

write_config() {
  cat > "$cnf" <<EOF
# Written by scripts/mariadb-sandbox.sh; regenerated on every start.
[mariadbd]
datadir=$dir/data
tmpdir=$dir/tmp
socket=$sock
pid-file=$pidfile
log-error=$errlog
port=$port
bind-address=127.0.0.1
skip-name-resolve
log-bin=$binlog_dir/mariadb-bin
log-bin-index=$binlog_dir/mariadb-bin.index
binlog_format=$binlog_format
binlog_row_image=FULL
binlog_row_metadata=$row_metadata
server_id=1
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
max_allowed_packet=64M
# A sandbox trades durability for speed; none of this changes what is logged.
sync_binlog=0
innodb_flush_log_at_trx_commit=2
innodb_buffer_pool_size=256M
innodb_log_file_size=256M
performance_schema=OFF
EOF
  if [ ${#extra_options[@]} -gt 0 ]; then
    echo "# --option" >> "$cnf"
    printf '%s\n' "${extra_options[@]}" >> "$cnf"
  fi
}

do_start() {
  local pid server install
  if pid=$(running_pid); then
    log "already running (pid $pid, port $port, dir $dir)"
    echo "$binlog_dir"
    return 0
  fi
  server=$(find_tool mariadbd mysqld) || die "mariadbd not found (install mariadb-server: scripts/install-deps.sh)"
  install=$(find_tool mariadb-install-db mysql_install_db) || die "mariadb-install-db not found (install mariadb-server)"

  mkdir -p "$dir/data" "$dir/tmp" "$binlog_dir"
  touch "$marker"
  rm -f "$pidfile" "$sock"
  write_config

  if [ ! -d "$dir/data/mysql" ]; then
    log "initialising $dir/data"
    if ! "$install" --defaults-file="$cnf" "${user_args[@]}" \
        --auth-root-authentication-method=normal --skip-test-db \
        > "$dir/install.log" 2>&1; then
      tail -n 25 "$dir/install.log" >&2 || true
      die "mariadb-install-db failed (full log: $dir/install.log)"
    fi
  fi

  log "starting mariadbd on 127.0.0.1:$port"
  : > "$errlog.start"
  # setsid: the server must outlive this script and not get the caller's
  # terminal signals (Ctrl-C in a quick start should not kill it half-way).
  # 9>&-: the server must not inherit (and so hold forever) the command lock.
  setsid "$server" --defaults-file="$cnf" "${user_args[@]}" \
    < /dev/null >> "$errlog.start" 2>&1 9>&- &
  local child=$!

  local deadline=$((SECONDS + START_TIMEOUT_S))
  until admin ping >/dev/null 2>&1; do
    if ! kill -0 "$child" 2>/dev/null; then
      show_error_log
      die "mariadbd exited during start-up (port $port in use? see $errlog)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      show_error_log
      kill "$child" 2>/dev/null || true
      die "mariadbd did not answer within ${START_TIMEOUT_S}s"
    fi
    sleep 0.2
  done

  # The replication user: TCP clients come from 127.0.0.1 (names are not
  # resolved), socket clients as localhost. Kept out of the binlog so that it
  # holds only what tests and workloads write.
  sql --batch <<'EOF' || { show_error_log; die "could not create the replication user"; }
SET SESSION sql_log_bin=0;
CREATE USER IF NOT EXISTS 'canal'@'127.0.0.1' IDENTIFIED BY 'canal';
CREATE USER IF NOT EXISTS 'canal'@'localhost' IDENTIFIED BY 'canal';
GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'canal'@'127.0.0.1';
GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'canal'@'localhost';
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
EOF
  pid=$(running_pid) || die "server answered but $pidfile is missing"
  log "running (pid $pid); root via --socket=$sock, replication user canal/canal on 127.0.0.1:$port"
  echo "$binlog_dir"
}

do_stop() {
  local pid
  if pid=$(running_pid); then
    log "stopping pid $pid"
    # A clean shutdown closes the current binlog (clears its in-use flag).
    admin shutdown >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + STOP_TIMEOUT_S))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        log "pid $pid still running after ${STOP_TIMEOUT_S}s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.5
        break
      fi
      sleep 0.2
    done
    log "stopped"
  else
    log "not running (port $port, dir $dir)"
  fi
  wipe_if_asked
}

do_status() { sandbox_status "socket: $sock" "binlog dir: $binlog_dir"; }

case "$cmd" in
  start) mkdir -p "$dir"; lock_dir 120; do_start ;;
  stop) if [ -f "$marker" ]; then lock_dir 120; fi; do_stop ;;
  restart) mkdir -p "$dir"; lock_dir 120; wipe=0; do_stop; do_start ;;
  kill) if [ -f "$marker" ]; then lock_dir 120; fi; do_kill "$sock" ;;
  status) do_status ;;
  -h|--help) usage 0 ;;
  *) log "unknown command: $cmd"; usage ;;
esac
