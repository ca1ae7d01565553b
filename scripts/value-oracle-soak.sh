#!/usr/bin/env bash
# The value oracle, longer than CI runs it:
#
#   scripts/value-oracle-soak.sh [SEED] [TABLES] [MINIMIZE]   (defaults: the time, 2000, 0)
#
# Runs ValueOracle.* of the release build (scripts/build.sh --release --target
# canal_integration_tests canal-server first) with CANAL_VALUE_ORACLE_SEED and
# CANAL_VALUE_ORACLE_TABLES (tables per metadata mode, FULL and MINIMAL; CI runs
# one covering circuit, ~210 each): every row of every generated table goes
# through canal-server and the client SDK and is compared with MariaDB's
# SELECT. MINIMIZE=n also shrinks the first n difference classes to their
# smallest reproducing table (CREATE TABLE + one-row INSERT), for a report.
# A failing run prints its seed: run it again with that seed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin="$repo/build/bin/canal_integration_tests"
[ -x "$bin" ] || { echo "value-oracle-soak.sh: build first: scripts/build.sh --release" >&2; exit 1; }
seed=${1:-$(date +%s)}
echo "value-oracle-soak.sh: seed $seed, ${2:-2000} tables per mode"
CANAL_VALUE_ORACLE_SEED=$seed CANAL_VALUE_ORACLE_TABLES=${2:-2000} CANAL_VALUE_ORACLE_MINIMIZE=${3:-0} \
  exec "$bin" --gtest_filter='ValueOracle.*'
