#!/usr/bin/env bash
# Configures and builds actex into ${BUILD_DIR:-build} (Release, 2 jobs by default).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"
