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
case ${1:-} in
  "")
    bash scripts/install_deps.sh
    bash scripts/build.sh
    cd "${BUILD_DIR:-build}"
    ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900
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
