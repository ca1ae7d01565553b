#!/usr/bin/env bash
# The randomized schema-history test, longer than CI runs it (a nightly run):
#
#   scripts/schema-history-soak.sh [SEEDS] [STATEMENTS]   (defaults 20 and 600)
#
# Runs SchemaHistoryRandom.* of the release build (scripts/build.sh --release
# first) with CANAL_SCHEMA_RANDOM_SEEDS / CANAL_SCHEMA_RANDOM_STATEMENTS: every
# seed's history is checked against information_schema after each statement,
# and the rows of a MINIMAL sandbox (port 14602) against a FULL one (14907).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin="$repo/build/bin/canal_integration_tests"
[ -x "$bin" ] || { echo "schema-history-soak.sh: build first: scripts/build.sh --release" >&2; exit 1; }
CANAL_SCHEMA_RANDOM_SEEDS=${1:-20} CANAL_SCHEMA_RANDOM_STATEMENTS=${2:-600} \
  exec "$bin" --gtest_filter='SchemaHistoryRandom.*'
