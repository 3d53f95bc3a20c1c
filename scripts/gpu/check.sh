#!/usr/bin/env bash
# Runs on the GPU machine (the device tool), from the repository root, with what
# scripts/gpu/prepare.sh packed carried in build/gpu-carry: the gpu tests, the forward
# benchmark against cuBLAS alone and end to end through `actex extract --device cuda`,
# HF transformers' own bf16 references and throughput. Every step's output lands in $OUT (the
# device tool brings it back); the figures are printed. Under 8 minutes on an H100.
#
# Usage: scripts/gpu/check.sh [STEP...]   steps: tests bench cpu hf (default: all)
set -uo pipefail

cd "$(dirname "$0")/../.."
root=$PWD
out=${OUT:-/tmp/actex-gpu-out}
mkdir -p "$out"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(tests bench cpu hf)
wants() { [[ " ${steps[*]} " == *" $1 "* ]]; }
# One step, limited in time, its output in $out/NAME.log; its summary lines printed.
step() {
  local name=$1 seconds=$2 pattern=$3
  shift 3
  local start=$SECONDS
  timeout "$seconds" "$@" >"$out/$name.log" 2>&1
  local status=$?
  echo "== $name: exit $status in $((SECONDS - start)) s"
  grep -E "$pattern" "$out/$name.log" | head -60
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader |
  tee "$out/gpu.txt"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
# The test binaries read the fixtures where they were built (/work/main/tests/fixtures).
if [[ ! -e /work/main ]]; then mkdir -p /work && ln -s "$root" /work/main; fi
[[ -d /work/main/tests/fixtures/qwen2-tiny ]] ||
  echo "no /work/main/tests/fixtures/qwen2-tiny: every parity case will fail to open its fixture"
eval "$(scripts/gpu/unpack.sh build/gpu-carry/actex-gpu.tar.xz /tmp/actex)"
export PYTHONUNBUFFERED=1
# A library the machine lacks (CUDA's are not carried: libcublas.so.13 must be there)
# fails every binary at load: say so first, not as a list of empty steps.
for binary in gpu_parity_test bench_gpu_forward actex; do
  path=$(command -v "$binary") || { echo "missing binary: $binary (not packed?)"; continue; }
  ldd "$path" | awk -v b="$binary" '/not found/ {print "missing library for " b ": " $1}'
done

if wants tests; then
  step hf_reference 120 "wrote|Error|error" python3 scripts/gpu/hf_reference.py \
    --fixtures tests/fixtures --out /tmp/hf-bf16 --dtype bfloat16 --device cuda
  # Each case in its own process, so that a crash or a hang in one family hides no
  # other; the first failing case again under compute-sanitizer, which names the kernel
  # and the address of a bad access.
  # Only where HF's references were written (torch or transformers may fail there).
  compgen -G "/tmp/hf-bf16/*.safetensors" >/dev/null && export ACTEX_HF_BF16_DIR=/tmp/hf-bf16
  start=$SECONDS
  failed=() skipped=()
  : >"$out/gpu_parity_test.log"
  cases=$(gpu_parity_test --gtest_list_tests | awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}')
  # No case listed is a binary that did not start (a library missing), not a pass.
  [[ -z $cases ]] && failed+=("(gpu_parity_test listed no case: it did not start)")
  for case in $cases; do
    timeout 90 gpu_parity_test --gtest_filter="$case" >"$out/case.log" 2>&1
    status=$?
    cat "$out/case.log" >>"$out/gpu_parity_test.log"
    verdict=$(grep -oE "PASSED|SKIPPED|FAILED" "$out/case.log" | head -1)
    echo "$case: exit $status ${verdict:-no verdict}"
    # A skip's reason (no usable GPU: CUDA's words, e.g. a driver older than CUDA 13).
    grep -E "^parity|Failure|max\|d\||Skipped|no usable GPU" "$out/case.log" | head -8
    [[ $status -ne 0 ]] && failed+=("$case")
    [[ $verdict == SKIPPED ]] && skipped+=("$case")
  done
  rm -f "$out/case.log"
  # On this machine a skip is no pass: CUDA could not use its GPU (the reasons are above).
  echo "== gpu_parity_test: ${#failed[@]} case(s) failed, ${#skipped[@]} skipped," \
    "in $((SECONDS - start)) s"
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [[ ${#failed[@]} -gt 0 && -n $cases && -x $sanitizer ]]; then
    step sanitizer 150 "=========|Failure|FAILED|PASSED" "$sanitizer" --tool memcheck \
      gpu_parity_test --gtest_filter="${failed[0]}"
  fi
fi
if wants bench; then
  # The forward alone against cuBLAS, then (--actex) end to end through the real
  # pipeline: pre-tokenized 256-token documents, loader, packer, forward, writer of one
  # bf16 resid_post site, the output on tmpfs so the disk does not decide.
  step bench_0.5b 240 "GPU|precision|fp32|bf16|end to end|error" bench_gpu_forward \
    --preset qwen2.5-0.5b --batch-tokens 4096 16384 65536 --iterations 5 \
    --actex "$(command -v actex)" --documents 4096 --e2e-batch-tokens 16384
  step bench_7b 200 "GPU|precision|fp32|bf16|end to end|error" bench_gpu_forward \
    --preset qwen2.5-7b --layers 4 --batch-tokens 4096 16384 32768 --iterations 3 \
    --actex "$(command -v actex)" --documents 1024 --e2e-batch-tokens 16384
fi
if wants cpu; then
  # The CPU side's ceilings on this machine's cores, beside the GPU's rate above: reading,
  # tokenizing on 1..16 threads, packing, the writer of one bf16 site to tmpfs and disk.
  if command -v bench_pipeline_stages >/dev/null; then
    mkdir -p /tmp/actex-stages-disk
    step cpu_stages 240 "tokens/s|CPU|threads|error" bench_pipeline_stages --threads "$(nproc)" \
      --docs 8000 --writer-tokens 262144 --disk-dir /tmp/actex-stages-disk
    # Four sites a shard (three copied behind the first at each seal), sealed in turn,
    # beside the next shard, and beside with the sites spilled by four threads: what
    # 16 cores make of the seal and spill threads.
    step cpu_writer_4_sites 120 "writer to|CPU|error" bench_pipeline_stages --threads 1 \
      --docs 200 --repeats 2 --writer-sites 4 --shard-mb 64 --writer-tokens 131072 \
      --disk-dir /tmp/actex-stages-disk
  else
    echo "== cpu_stages: bench_pipeline_stages was not packed (prepare.sh BINARY list)"
  fi
fi
if wants hf; then
  step hf_0.5b 100 "tokens/s|best|GPU|Error" python3 bench/hf_throughput.py \
    --model qwen2.5-0.5b --batches 16,64,256 --seconds 2
  step hf_7b 100 "tokens/s|best|GPU|Error" python3 bench/hf_throughput.py \
    --model qwen2.5-7b --batches 16,64 --seconds 2
fi
