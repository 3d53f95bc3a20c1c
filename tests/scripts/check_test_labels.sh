#!/usr/bin/env bash
# Every ctest test carries exactly one of the known labels (tests/README.md), so that
# `ctest -L unit`, `-L process`, ... together run the whole suite, each test once.
#
#   check_test_labels.sh BUILD_DIR LABEL...   lists every test of BUILD_DIR without a
#                                             label or with several, and fails if any
#   check_test_labels.sh --self-test LABEL... proves the check fails on an unlabeled
#                                             and on a twice-labeled test
#
# Tests of binaries not built yet (gtest's <target>_NOT_BUILT placeholders, as after
# `scripts/test.sh --quick`) have no cases to label and are left out of the count.
set -euo pipefail

# Prints the names of the tests in build folder $1 that `ctest -N` selects with the
# options that follow, one a line.
test_names() {
  local build=$1
  shift
  ctest --test-dir "$build" -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p' |
    grep -v '_NOT_BUILT$' || true
}

# Checks build folder $1 against the labels that follow; returns 1 on any mislabel.
# ctest reads a copy of the folder's test lists: any ctest run, even `ctest -N`,
# rewrites Testing/Temporary/LastTest.log, which the ctest running this check is
# writing.
check() {
  local copy status=0
  copy=$(mktemp -d)
  (cd "$1" && find . -name CTestTestfile.cmake -exec cp --parents {} "$copy" \;)
  shift
  check_copy "$copy" "$@" || status=$?
  rm -rf "$copy"
  return $status
}

# check on build folder $1, which it may write to.
check_copy() {
  local build=$1 label count labeled=0 found=0
  shift
  local labels_regex
  labels_regex="^($(IFS='|'; echo "$*"))\$"
  local -a all
  mapfile -t all < <(test_names "$build")
  for label in "$@"; do
    count=$(test_names "$build" -L "^$label\$" | grep -c . || true)
    echo "$label: $count tests"
    labeled=$((labeled + count))
  done
  local unlabeled twice
  unlabeled=$(test_names "$build" -LE "$labels_regex")
  if [[ -n $unlabeled ]]; then
    echo "tests with none of the labels ($*):" >&2
    sed 's/^/  /' <<<"$unlabeled" >&2
    found=1
  fi
  twice=$(for label in "$@"; do test_names "$build" -L "^$label\$"; done | sort | uniq -d)
  if [[ -n $twice ]]; then
    echo "tests with more than one label:" >&2
    sed 's/^/  /' <<<"$twice" >&2
    found=1
  fi
  if ((found == 0 && labeled != ${#all[@]})); then
    echo "labels count $labeled tests but ctest lists ${#all[@]}" >&2
    found=1
  fi
  if ((found)); then
    echo "give each test one label: actex_test(NAME LABEL ...) or actex_label_test" \
         "in tests/CMakeLists.txt" >&2
    return 1
  fi
  local not_built
  not_built=$(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: \(.*\)_NOT_BUILT$/\1/p' |
    sort -u | wc -l)
  echo "all ${#all[@]} tests carry exactly one label ($not_built test binaries not built left out)"
}

self_test() {
  local tree status=0
  tree=$(mktemp -d)
  self_test_in "$tree" "$@" || status=$?
  rm -rf "$tree"
  return $status
}

# self_test in the empty folder $1.
self_test_in() {
  local tree=$1
  shift
  local good="add_test(A.Unit true)
set_tests_properties(A.Unit PROPERTIES LABELS $1)
add_test(gone_test_NOT_BUILT true)"
  printf '%s\n' "$good" >"$tree/CTestTestfile.cmake"
  if ! check "$tree" "$@" >/dev/null 2>&1; then
    echo "self-test: a correctly labeled suite was refused" >&2
    return 1
  fi
  local bad
  for bad in "add_test(B.None true)" \
             "add_test(B.Twice true)
set_tests_properties(B.Twice PROPERTIES LABELS \"$1;$2\")" \
             "add_test(B.Unknown true)
set_tests_properties(B.Unknown PROPERTIES LABELS not-a-kind)"; do
    printf '%s\n%s\n' "$good" "$bad" >"$tree/CTestTestfile.cmake"
    if check "$tree" "$@" >/dev/null 2>&1; then
      echo "self-test: missed the mislabel in: $bad" >&2
      return 1
    fi
  done
  echo "self-test: a labeled suite passes, every mislabel is caught"
}

if [[ ${1:-} == --self-test && $# -ge 3 ]]; then
  shift
  self_test "$@"
elif [[ $# -ge 2 && ${1:-} != --self-test ]]; then
  check "$@"
else
  echo "usage: $0 BUILD_DIR LABEL... | --self-test LABEL LABEL..." >&2
  exit 2
fi
