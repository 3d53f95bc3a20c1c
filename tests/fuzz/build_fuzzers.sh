#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang into BUILD_DIR (ctest's Fuzz.Build).
# Usage: build_fuzzers.sh SOURCE_DIR BUILD_DIR
# The compiler is ${ACTEX_FUZZ_CXX:-clang++-16}: Debian 12's clang-16 with
# libclang-rt-16-dev (scripts/install_deps.sh installs both).
set -euo pipefail
source_dir=$1
build_dir=$2
compiler=${ACTEX_FUZZ_CXX:-clang++-16}
if ! command -v "$compiler" >/dev/null; then
  echo "Fuzz.Build: $compiler not found; install clang-16 and libclang-rt-16-dev" \
       "(bash scripts/install_deps.sh)" >&2
  exit 1
fi
cmake -S "$source_dir/tests/fuzz/clang" -B "$build_dir" -DCMAKE_CXX_COMPILER="$compiler" \
      -DACTEX_SOURCE_DIR="$source_dir" >/dev/null
cmake --build "$build_dir" -j "${ACTEX_FUZZ_JOBS:-2}"
