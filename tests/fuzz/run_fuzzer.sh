#!/usr/bin/env bash
# One bounded libFuzzer run (ctest's Fuzz.* tests); fails on any crash, sanitizer
# report, leak, timeout or broken invariant, leaving the input in WORK_DIR.
# Usage: run_fuzzer.sh FUZZER SEED_CORPUS WORK_DIR SECONDS [libFuzzer flags...]
# New inputs go to WORK_DIR/corpus, which starts empty on every run, so the seed
# corpus in the source tree is only read and every run starts from the same place.
set -euo pipefail
fuzzer=$1
seeds=$2
work_dir=$3
seconds=$4
shift 4
rm -rf "$work_dir"
mkdir -p "$work_dir/corpus"
# Symbolized stack traces when some llvm-symbolizer is installed (not required).
for symbolizer in "$(command -v llvm-symbolizer || true)" /usr/lib/llvm-*/bin/llvm-symbolizer; do
  if [ -n "$symbolizer" ] && [ -x "$symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH=$symbolizer
    break
  fi
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# -malloc_limit_mb: no input of a few KiB has a reason to allocate more; a larger
# allocation is a length header trusted too far, and is reported as a crash.
log=$work_dir/fuzz.log
status=0
"$fuzzer" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=256 -print_final_stats=1 -artifact_prefix="$work_dir/" "$@" \
  "$work_dir/corpus" "$seeds" >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "$(basename "$fuzzer") failed (exit status $status); the end of $log:"
  tail -n 150 "$log"
  echo "Reproduce: $fuzzer $work_dir/<crash-, leak- or timeout- file above>"
  exit "$status"
fi
grep -E '^(INFO: seed corpus|#[0-9]+[[:space:]]+(INITED|DONE)|Done [0-9]+ runs|stat::)' "$log"
