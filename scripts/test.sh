#!/usr/bin/env bash
# The test suite under ctest (labels: tests/README.md).
#
#   scripts/test.sh          from a fresh Debian 12 machine: installs the packages,
#                            builds everything and runs every test (what CI runs)
#   scripts/test.sh --quick  the edit-test loop on a machine that builds already:
#                            builds and runs only the `unit` and `parity` tests
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
  *)
    echo "usage: $0 [--quick]" >&2
    exit 2
    ;;
esac
