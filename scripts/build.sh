#!/usr/bin/env bash
# Configures and builds one flavour of the project with CMake + Ninja.
#
#   scripts/build.sh [--release|--asan|--tsan|--fuzz] [cmake --build args, e.g. --target canal-binlog]
#
#   --release (default)  build/       Release, tests and benchmarks
#   --asan               build-asan/  Debug, -DCANAL_SANITIZE=ON (ASan+UBSan), no benchmarks
#   --tsan               build-tsan/  RelWithDebInfo, -DCANAL_TSAN=ON (ThreadSanitizer),
#                                     no benchmarks
#   --fuzz               build-fuzz/  clang, -DCANAL_BUILD_FUZZ=ON + sanitizers; builds
#                                     only the fuzz targets unless targets are given
#
# Warnings are errors when CI=true or CANAL_WERROR=ON (scripts/test.sh sets it).
# Parallelism: $JOBS (default 2). Uses ccache when installed (the top-level
# CMakeLists.txt picks it up). A build dir configured with another generator or
# compiler is wiped and configured afresh.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
mode=release
if [ $# -gt 0 ]; then
  case "$1" in
    --release) mode=release; shift ;;
    --asan) mode=asan; shift ;;
    --tsan) mode=tsan; shift ;;
    --fuzz) mode=fuzz; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  esac
fi
build_args=("$@")
jobs=${JOBS:-2}

generator="Ninja"
if ! command -v ninja >/dev/null 2>&1; then
  echo "build.sh: ninja not found (scripts/install-deps.sh installs it); using Unix Makefiles" >&2
  generator="Unix Makefiles"
fi

cc="" cxx=""
case "$mode" in
  release)
    dir="$repo/build"
    opts=(-DCMAKE_BUILD_TYPE=Release -DCANAL_BUILD_TESTS=ON -DCANAL_BUILD_BENCH=ON
          -DCANAL_SANITIZE=OFF -DCANAL_BUILD_FUZZ=OFF)
    ;;
  asan)
    dir="$repo/build-asan"
    # -g1 (line tables, no variables): enough for the sanitizers' stacks, and
    # a cheaper compile than -g.
    opts=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCANAL_BUILD_TESTS=ON -DCANAL_BUILD_BENCH=OFF
          -DCANAL_SANITIZE=ON -DCANAL_BUILD_FUZZ=OFF)
    ;;
  tsan)
    dir="$repo/build-tsan"
    # Optimised with line tables: the store stress test runs 10 million
    # entries under TSan's ~10x slowdown, and reports need readable stacks.
    # -O1 -g1 compiles ~40% faster than -O2 -g (the server's TUs are heavy
    # with Asio and protobuf) and is what TSan's own docs suggest.
    opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
          -DCANAL_BUILD_TESTS=ON -DCANAL_BUILD_BENCH=OFF
          -DCANAL_SANITIZE=OFF -DCANAL_TSAN=ON -DCANAL_BUILD_FUZZ=OFF)
    ;;
  fuzz)
    dir="$repo/build-fuzz"
    cc=$(command -v clang || true)
    cxx=$(command -v clang++ || true)
    if [ -z "$cc" ] || [ -z "$cxx" ]; then
      echo "build.sh: --fuzz needs clang (apt-get install clang)" >&2
      exit 1
    fi
    # Optimised with debug info: fuzzing wants speed and readable stacks.
    # Tests must be on: the fuzz targets live under tests/fuzz.
    opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCANAL_BUILD_TESTS=ON -DCANAL_BUILD_BENCH=OFF
          -DCANAL_SANITIZE=ON -DCANAL_BUILD_FUZZ=ON
          -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx")
    [ ${#build_args[@]} -gt 0 ] || build_args=(--target event_decoder_fuzz ddl_parser_fuzz)
    ;;
esac

# Warnings are errors in CI (CI=true, as .ci/run sets it) and under
# scripts/test.sh (CANAL_WERROR=ON); elsewhere they only warn.
werror=OFF
if [ "${CANAL_WERROR:-}" = ON ] || [ "${CI:-}" = true ]; then
  werror=ON
fi
opts+=(-DCANAL_WERROR="$werror")

cache="$dir/CMakeCache.txt"
if [ -f "$cache" ]; then
  old_generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  old_cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
  if [ "$old_generator" != "$generator" ] || { [ -n "$cxx" ] && [ "$old_cxx" != "$cxx" ]; }; then
    echo "build.sh: $dir was configured differently ($old_generator, $old_cxx); starting afresh" >&2
    rm -rf "$dir"
  fi
fi

# Paths relative to the checkout in ccache's keys: a fresh clone elsewhere (CI's) or a
# worktree hits the objects another checkout of the same sources compiled.
# The debug-info builds (asan, tsan, fuzz) would also hash the build folder's absolute path;
# their objects differ only in DW_AT_comp_dir, which the sanitizers' stacks do not print.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
echo "build.sh: $mode build in $dir (-j$jobs)" >&2
cmake -S "$repo" -B "$dir" -G "$generator" "${opts[@]}"
cmake --build "$dir" -j "$jobs" ${build_args[@]+"${build_args[@]}"}
echo "build.sh: $mode build done: $dir/bin" >&2
