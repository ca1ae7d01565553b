#!/usr/bin/env bash
# Installs every Debian 12 package the project needs to build, test and run.
# Idempotent and non-interactive; safe to run again. Runs as root, or as a user
# with sudo (only apt-get is run through sudo); when everything is installed
# already it needs neither. CANAL_DEPS_EXTRA adds package names (tests use it).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential g++ cmake ninja-build ccache pkg-config git python3
  # clang for the libFuzzer target (optional at run time, installed for CI)
  clang
  # libraries
  libgtest-dev libgmock-dev libbenchmark-dev
  libspdlog-dev libfmt-dev
  libzstd-dev zlib1g-dev
  nlohmann-json3-dev libcli11-dev
  libboost-dev libssl-dev
  libprotobuf-dev protobuf-compiler
  libre2-dev
  default-libmysqlclient-dev
  # Connector/C's client plugins (caching_sha2_password.so): the replay-primary suite logs in with them
  libmariadb3
  libzookeeper-mt-dev
  librdkafka-dev librabbitmq-dev
  # servers for integration tests, the benchmark and the quick start
  mariadb-server mariadb-client
  zookeeper
  rabbitmq-server
  # the metrics integration test scrapes canal-server with a real Prometheus
  prometheus
  # tools used by tests and fixture helpers
  zstd xxd procps
  # bin/canal-admin.sh calls the running server's admin API with it
  curl
  # the admin page's browser test drives headless Chromium through chromedriver (WebDriver over HTTP)
  chromium chromium-driver
  # bench/compare_cursor_writes.sh counts the server's fsync/fdatasync calls
  strace
  # GNU time: the benchmarks' CPU figures of client processes (bench/run_e2e_bench.sh)
  time
  # javac/java: the oracle for Java's FLOAT/DOUBLE text (tests/render/java_float_text_test.cc)
  default-jdk-headless
)

# Node.js and npm: the end-to-end benchmark's peer, @vlasky/zongji, comes from
# npm (bench/run_e2e_bench.sh installs it under build/). A machine that already
# has node with its own npm (NodeSource's nodejs bundles it) keeps them.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

# shellcheck disable=SC2206  # a list of names, split on blanks
[ -z "${CANAL_DEPS_EXTRA:-}" ] || PACKAGES+=(${CANAL_DEPS_EXTRA})

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: ${#missing[@]} package(s) to install (${missing[*]}) and this shell is $(id -un) without" \
      "sudo: run this again as root (su -), or install sudo and allow $(id -un) to use it" >&2
    exit 1
  fi
  SUDO="sudo"
fi

echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}${SUDO:+ (through sudo)}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# The mariadb-server package would start a system-wide server on port 3306; the
# project runs its own sandboxes, so keep package scripts from starting services.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
