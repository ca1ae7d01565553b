#!/usr/bin/env bash
# ctest's fixture around the test binaries that share one ZooKeeper
# (canal_zk_fixture in tests/CMakeLists.txt; tests/support/zk_sandbox.h):
#
#   zk_fixture.sh start|stop PORT DIR
#
# start  wipes DIR's old server and data and starts a fresh one on PORT;
# stop   stops it and wipes DIR.
# Both do nothing (exit 0) when ZooKeeper is not installed: the tests skip then.
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: zk_fixture.sh start|stop PORT DIR" >&2; exit 2; }
cmd=$1 port=$2 dir=$3
sandbox="$(cd "$(dirname "$0")/../.." && pwd)/scripts/zk-sandbox.sh"

if [ ! -f /usr/share/java/zookeeper.jar ]; then
  echo "zk_fixture: ZooKeeper is not installed; the tests that need it skip"
  exit 0
fi
case "$cmd" in
  start)
    if [ -e "$dir" ]; then bash "$sandbox" stop --port "$port" --dir "$dir" --wipe; fi
    bash "$sandbox" start --port "$port" --dir "$dir"
    ;;
  stop)
    bash "$sandbox" stop --port "$port" --dir "$dir" --wipe
    ;;
  *) echo "zk_fixture: unknown command $cmd" >&2; exit 2 ;;
esac
