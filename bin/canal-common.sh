# Shared by bin/startup.sh and bin/stop.sh (sourced, not run).

# is_canal_server PID: true for a live process that is a canal-server (not a
# zombie, not a pid reused by another program).
is_canal_server() {
  local pid=$1 state
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$state" != "Z" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q canal-server
}
