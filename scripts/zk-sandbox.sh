#!/usr/bin/env bash
# A throwaway standalone ZooKeeper for HA tests and local experiments.
#
#   zk-sandbox.sh start|stop|kill|status [--port N] [--dir D] [--wipe]
#
# Runs Debian's `zookeeper` package (jars in /usr/share/java) with a private
# config on 127.0.0.1 only: no admin server, tickTime 500 ms, sessions from
# 1 s to 120 s, the srvr/ruok/stat four-letter words allowed. Everything lives
# under --dir (default /tmp/canal-zk-PORT): zoo.cfg, data/, the pid file and
# zookeeper.log.
#
# start   writes zoo.cfg, starts the server, waits (bounded) until it answers
#         `srvr`, and prints the port alone on stdout (messages go to stderr).
#         Already running: says so. Data (nodes, sessions) survive a stop and
#         start; sessions stay alive across a restart until their own timeout.
# stop    stops the server (SIGTERM, then SIGKILL if it lingers) and waits;
#         --wipe also deletes --dir (only a dir this script made).
# kill    SIGKILLs the server and waits until it is gone.
# status  prints pid, port and dir; exit 0 running, 3 stopped.
#
# Connect with servers "127.0.0.1:N", e.g.
#   /usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:N

# shellcheck source=scripts/sandbox-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/sandbox-common.sh"
sandbox_timeouts 30 20

parse_sandbox_args 12181 65535 /tmp/canal-zk "$@"

readonly cfg="$dir/zoo.cfg"
readonly pidfile="$dir/zookeeper.pid"
readonly logfile="$dir/zookeeper.log"
readonly java_dir=/usr/share/java
# Marks a directory this script created, so --wipe never deletes anything else.
readonly marker="$dir/.canal-zk-sandbox"

find_java() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"; return 0; fi
  command -v java 2>/dev/null && return 0
  [ -x /usr/bin/java ] && { echo /usr/bin/java; return 0; }
  return 1
}

# zookeeper.jar's manifest names its own dependencies (jute, netty, metrics,
# slf4j-api, ...); slf4j-simple is added so the server's log reaches
# zookeeper.log instead of being dropped.
classpath() {
  local cp="$java_dir/zookeeper.jar" jar
  [ -f "$java_dir/zookeeper.jar" ] || return 1
  for jar in zookeeper-jute.jar slf4j-api.jar slf4j-simple.jar; do
    [ -f "$java_dir/$jar" ] && cp="$cp:$java_dir/$jar"
  done
  echo "$cp"
}

# (A reused pid must not be taken for our server.)
running_pid() { pid_alive_from "$pidfile" cmdline "ZooKeeperServerMain $cfg"; }

# srvr over bash's /dev/tcp: true when the server answers as a serving node.
# (The inner script is single-quoted on purpose: $1 is its own argument.)
answers() {
  # shellcheck disable=SC2016
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf srvr >&3
    cat <&3' _ "$port" 2>/dev/null | grep -q '^Mode:'
}

write_config() {
  cat > "$cfg" <<EOF
# Written by scripts/zk-sandbox.sh; regenerated on every start.
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
tickTime=500
# Short sessions let tests expire one in seconds; long ones stay possible.
minSessionTimeout=1000
maxSessionTimeout=120000
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,stat
# A sandbox trades durability for speed.
forceSync=no
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
EOF
}

do_start() {
  local pid java cp
  if pid=$(running_pid); then
    log "already running (pid $pid, port $port, dir $dir)"
    echo "$port"
    return 0
  fi
  java=$(find_java) || die "java not found (install default-jre-headless, or set JAVA_HOME)"
  cp=$(classpath) || die "$java_dir/zookeeper.jar not found (install Debian's zookeeper package)"
  if answers; then
    die "something else already answers on 127.0.0.1:$port (pick another --port)"
  fi

  mkdir -p "$dir/data"
  touch "$marker"
  rm -f "$pidfile"
  write_config

  log "starting ZooKeeper on 127.0.0.1:$port"
  echo "=== start $(date '+%F %T')" >> "$logfile"
  # setsid: the server must outlive this script and not get the caller's
  # terminal signals. 9>&-: it must not inherit (and hold) the command lock.
  setsid "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -Dorg.slf4j.simpleLogger.showDateTime=true \
    -Dzookeeper.jmx.log4j.disable=true \
    -cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain "$cfg" \
    < /dev/null >> "$logfile" 2>&1 9>&- &
  local child=$!
  echo "$child" > "$pidfile"

  local deadline=$((SECONDS + START_TIMEOUT_S))
  until answers; do
    if ! kill -0 "$child" 2>/dev/null; then
      tail -n 25 "$logfile" >&2 || true
      rm -f "$pidfile"
      die "ZooKeeper exited during start-up (port $port in use? see $logfile)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 25 "$logfile" >&2 || true
      kill -KILL "$child" 2>/dev/null || true
      rm -f "$pidfile"
      die "ZooKeeper did not answer within ${START_TIMEOUT_S}s (see $logfile)"
    fi
    sleep 0.1
  done
  log "running (pid $child) on 127.0.0.1:$port"
  echo "$port"
}

do_stop() {
  # shellcheck disable=SC2119  # the default kill suffices: ZooKeeper is one process
  sandbox_stop
  wipe_if_asked
}

do_status() { sandbox_status "dir: $dir"; }

# shellcheck disable=SC2119  # do_kill takes optional leftovers, none here
case "$cmd" in
  start) mkdir -p "$dir"; lock_dir 60; do_start ;;
  stop) if [ -f "$marker" ]; then lock_dir 60; fi; do_stop ;;
  kill) if [ -f "$marker" ]; then lock_dir 60; fi; do_kill ;;
  status) do_status ;;
  -h|--help) usage 0 ;;
  *) log "unknown command: $cmd"; usage ;;
esac
