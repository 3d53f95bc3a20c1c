#!/usr/bin/env bash
# Configures and builds actex into ${BUILD_DIR:-build} (Release, 2 jobs by default).
# With arguments, builds only those targets (the demo builds `actex` alone: the tests,
# benchmarks and fuzzers take most of a fresh 2-core machine's build time).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" "${targets[@]}"
