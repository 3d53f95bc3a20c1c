#!/usr/bin/env bash
# The test suite under ctest (labels: tests/README.md).
#
#   scripts/test.sh          from a fresh Debian 12 machine: installs the packages,
#                            builds everything and runs every test (what CI runs)
#   scripts/test.sh --quick  the edit-test loop on a machine that builds already:
#                            builds and runs only the `unit` and `parity` tests
#   scripts/test.sh --sanitize [LABEL...]
#                            builds the tests of LABELs (default: unit parity) into
#                            ${BUILD_DIR:-build-sanitize} with AddressSanitizer and UBSan
#                            (beside libstdc++'s assertions, on in every build), without
#                            CUDA, and runs them; the first report fails the test. Slow:
#                            about 40 minutes to build on 2 cores, the default labels
#                            then 7 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
quick_labels=(unit parity)
waiting_labels='^(process|network)$'
case ${1:-} in
  "")
    bash scripts/install_deps.sh
    bash scripts/build.sh
    cd "${BUILD_DIR:-build}"
    # The cases that compute (unit, parity, fuzz) one a core; then the jobs of real
    # processes, which spend most of their time waiting out heartbeat timeouts and
    # signals, two a core (on 2 cores 7 minutes instead of 10). The second runs even
    # when the first failed; the script fails if either did.
    failed=0
    ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900 \
      -LE "$waiting_labels" || failed=1
    ctest --output-on-failure -j "${PROCESS_JOBS:-$((2 * $(nproc)))}" --timeout 900 \
      -L "$waiting_labels" || failed=1
    exit "$failed"
    ;;
  --quick)
    bash scripts/build.sh "${quick_labels[@]/#/tests_}"
    cd "${BUILD_DIR:-build}"
    ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900 \
      -L "^($(IFS='|'; echo "${quick_labels[*]}"))\$"
    ;;
  --sanitize)
    shift
    labels=("${quick_labels[@]}")
    if (($#)); then labels=("$@"); fi
    build_dir=${BUILD_DIR:-build-sanitize}
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACTEX_CUDA=OFF \
      -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer \
-fno-sanitize-recover=undefined" >/dev/null
    targets=()
    for label in "${labels[@]}"; do targets+=(--target "tests_$label"); done
    cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" "${targets[@]}"
    cd "$build_dir"
    # A child `actex` is this build's too, so the process tests check it as well.
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
    ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 3600 \
      -L "^($(IFS='|'; echo "${labels[*]}"))\$"
    ;;
  *)
    echo "usage: $0 [--quick | --sanitize [LABEL...]]" >&2
    exit 2
    ;;
esac
