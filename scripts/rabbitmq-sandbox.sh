#!/usr/bin/env bash
# A throwaway RabbitMQ broker for the MQ-mode tests, the benchmark and local
# experiments.
#
#   rabbitmq-sandbox.sh start|stop|kill|status [--port N] [--dir D] [--wipe]
#       [--option 'key = value']...
#
# Runs Debian's `rabbitmq-server` package as its own node, on 127.0.0.1 only,
# with everything under --dir (default /tmp/canal-rabbitmq-PORT): config,
# Erlang cookie (HOME), mnesia data, logs, pid file. Ports, all on loopback:
#   N       AMQP (user guest / guest, virtual host /)
#   N+1     epmd, its own daemon (ERL_EPMD_PORT), stopped with the broker
#   N+2     Erlang distribution of the node
#   N+3..9  distribution ports of rabbitmqctl and friends
# The node is named canal-rmq-N@localhost. No plugins. The system service of
# the package is never used (install-deps.sh keeps it from starting).
# Each --option adds one line to rabbitmq.conf (e.g. 'max_message_size = 1048576';
# a later line wins); the file is rewritten on every start, so a start can
# change them.
#
# start   writes the config, starts the broker, waits (bounded) until its AMQP
#         port answers, and prints the port alone on stdout (messages go to
#         stderr). Already running: says so. Queues, exchanges and persistent
#         messages survive a stop and start.
# stop    stops the broker (SIGTERM: a clean shutdown; SIGKILL if it lingers)
#         and its epmd; --wipe also deletes --dir (only a dir this script made).
# kill    SIGKILLs the broker (a crash) and waits until it is gone.
# status  prints pid, port and dir; exit 0 running, 3 stopped.

# shellcheck source=scripts/sandbox-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/sandbox-common.sh"
sandbox_timeouts 90 30

extra_options=()
parse_extra_arg() {
  case "$1" in
    --option) [ $# -ge 2 ] || usage; extra_options+=("$2"); taken=2 ;;
    --option=*) extra_options+=("${1#--option=}"); taken=1 ;;
  esac
}
parse_sandbox_args 14220 65526 /tmp/canal-rabbitmq "$@"
# One rabbitmq.conf line each: a newline would smuggle in more lines.
for opt in ${extra_options[@]+"${extra_options[@]}"}; do
  case "$opt" in
    *$'\n'*|*$'\r'*) die "bad --option (contains a newline): $opt" ;;
    *=*) ;;
    *) die "bad --option: '$opt' (want 'key = value')" ;;
  esac
done

readonly pidfile="$dir/rabbitmq.pid"
readonly logfile="$dir/rabbitmq-sandbox.log"
readonly marker="$dir/.canal-rabbitmq-sandbox"
readonly node="canal-rmq-$port@localhost"
readonly server=/usr/lib/rabbitmq/bin/rabbitmq-server

# The environment every RabbitMQ and epmd command of this sandbox runs with.
sandbox_env() {
  export HOME="$dir"  # the Erlang cookie lives in $HOME/.erlang.cookie
  export RABBITMQ_NODENAME="$node"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$port"
  export ERL_EPMD_PORT=$((port + 1))
  export ERL_EPMD_ADDRESS=127.0.0.1
  export RABBITMQ_DIST_PORT=$((port + 2))
  export RABBITMQ_CTL_DIST_PORT_MIN=$((port + 3))
  export RABBITMQ_CTL_DIST_PORT_MAX=$((port + 9))
  export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
  export RABBITMQ_MNESIA_BASE="$dir/mnesia"
  export RABBITMQ_LOG_BASE="$dir/log"
  export RABBITMQ_PID_FILE="$dir/beam.pid"
  # Busy-waiting schedulers would steal CPU from everyone on a shared machine;
  # the distribution listener stays on loopback too.
  export RABBITMQ_SERVER_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none -kernel inet_dist_use_interface {127,0,0,1}"
}

# The broker's pid: the start script's shell, which turns SIGTERM into a
# clean stop of the Erlang VM it runs.
running_pid() { pid_alive_from "$pidfile" environ "RABBITMQ_NODENAME=$node"; }

# The Erlang VM of our node (a child of the start script; RabbitMQ writes its
# pid to RABBITMQ_PID_FILE).
beam_pid() {
  local pid
  pid=$(cat "$dir/beam.pid" 2>/dev/null || true)
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "beam.* -home $dir " || return 1
  echo "$pid"
}

# AMQP answers: the broker replies to a protocol header with connection.start.
answers() {
  # shellcheck disable=SC2016
  timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "AMQP\x00\x00\x09\x01" >&3
    head -c 8 <&3' _ "$port" 2>/dev/null | od -An -tx1 | grep -q '^ *01 00 00'
}

write_config() {
  cat > "$dir/rabbitmq.conf" <<CONF
# Written by scripts/rabbitmq-sandbox.sh; regenerated on every start.
listeners.tcp.default = 127.0.0.1:$port
loopback_users.guest = true
log.file.level = info
log.console = false
# A sandbox on a busy test machine: never block publishers for disk space.
disk_free_limit.absolute = 1MB
CONF
  if [ ${#extra_options[@]} -gt 0 ]; then
    echo "# --option" >> "$dir/rabbitmq.conf"
    printf '%s\n' "${extra_options[@]}" >> "$dir/rabbitmq.conf"
  fi
  echo "[]." > "$dir/enabled_plugins"
}

stop_epmd() {
  command -v epmd >/dev/null 2>&1 || return 0
  (sandbox_env; epmd -port "$ERL_EPMD_PORT" -kill >/dev/null 2>&1) || true
}

do_start() {
  local pid
  if pid=$(running_pid); then
    log "already running (pid $pid, port $port, dir $dir)"
    echo "$port"
    return 0
  fi
  [ -x "$server" ] || die "$server not found (install Debian's rabbitmq-server package)"
  if answers; then
    die "something else already answers on 127.0.0.1:$port (pick another --port)"
  fi
  mkdir -p "$dir/mnesia" "$dir/log"
  touch "$marker"
  rm -f "$pidfile" "$dir/beam.pid"
  write_config

  log "starting RabbitMQ node $node on 127.0.0.1:$port"
  echo "=== start $(date '+%F %T')" >> "$logfile"
  (
    sandbox_env
    cd "$dir"
    # setsid: the broker must outlive this script; 9>&-: not holding the lock.
    exec setsid "$server" < /dev/null >> "$logfile" 2>&1 9>&-
  ) &
  local child=$!
  echo "$child" > "$pidfile"

  local deadline=$((SECONDS + START_TIMEOUT_S))
  until answers; do
    if ! kill -0 "$child" 2>/dev/null; then
      tail -n 30 "$logfile" >&2 || true
      rm -f "$pidfile"
      stop_epmd
      die "RabbitMQ exited during start-up (ports $port..$((port + 9)) in use? see $logfile and $dir/log)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$logfile" >&2 || true
      kill_tree "$child"
      rm -f "$pidfile"
      stop_epmd
      die "RabbitMQ did not answer within ${START_TIMEOUT_S}s (see $logfile and $dir/log)"
    fi
    sleep 0.2
  done
  log "running (pid $child) on 127.0.0.1:$port"
  echo "$port"
}

# kill_tree PID: SIGKILL the Erlang VM and the start script.
kill_tree() {
  local beam
  beam=$(beam_pid || true)
  [ -n "$beam" ] && kill -KILL "$beam" 2>/dev/null || true
  kill -KILL "$1" 2>/dev/null || true
}

do_stop() {
  sandbox_stop kill_tree
  stop_epmd
  wipe_if_asked
}

do_crash() {
  local pid beam
  if ! pid=$(running_pid); then
    log "not running (port $port, dir $dir)"
    return 0
  fi
  beam=$(beam_pid || true)
  log "killing pid $pid and its VM ${beam:-?} (SIGKILL)"
  kill_tree "$pid"
  wait_gone "$pid" "$STOP_TIMEOUT_S" || die "pid $pid survived SIGKILL"
  [ -z "$beam" ] || wait_gone "$beam" "$STOP_TIMEOUT_S" || die "pid $beam survived SIGKILL"
  rm -f "$pidfile"
  log "killed"
}

do_status() { sandbox_status "dir: $dir"; }

case "$cmd" in
  start) mkdir -p "$dir"; lock_dir 120; do_start ;;
  stop) if [ -f "$marker" ]; then lock_dir 120; fi; do_stop ;;
  kill) if [ -f "$marker" ]; then lock_dir 120; fi; do_crash ;;
  status) do_status ;;
  -h|--help) usage 0 ;;
  *) log "unknown command: $cmd"; usage ;;
esac
