#!/usr/bin/env bash
# Runs on the GPU machine (the device tool), from the repository root, with what
# scripts/gpu/prepare.sh packed carried in build/gpu-carry: the gpu tests, the forward
# benchmark against cuBLAS, HF transformers' own bf16 references and throughput, and an
# end-to-end `actex extract --device cuda`. Every step's output lands in $OUT (the
# device tool brings it back); the figures are printed. Under 8 minutes on an H100.
#
# Usage: scripts/gpu/check.sh [STEP...]   steps: tests bench e2e hf (default: all)
set -uo pipefail

cd "$(dirname "$0")/../.."
root=$PWD
out=${OUT:-/tmp/actex-gpu-out}
mkdir -p "$out"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(tests bench e2e hf)
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
eval "$(scripts/gpu/unpack.sh build/gpu-carry/actex-gpu.tar.xz /tmp/actex)"
export PYTHONUNBUFFERED=1

if wants tests; then
  step hf_reference 120 "wrote|Error|error" python3 scripts/gpu/hf_reference.py \
    --fixtures tests/fixtures --out /tmp/hf-bf16 --dtype bfloat16 --device cuda
  ACTEX_HF_BF16_DIR=/tmp/hf-bf16 step gpu_parity_test 180 \
    "^parity|FAILED|PASSED|SKIPPED|Failure|max\|d\|" gpu_parity_test
fi
if wants bench; then
  step bench_0.5b 120 "GPU|precision|fp32|bf16|error" bench_gpu_forward \
    --preset qwen2.5-0.5b --batch-tokens 4096 16384 65536 --iterations 5
  step bench_7b 120 "GPU|precision|fp32|bf16|error" bench_gpu_forward \
    --preset qwen2.5-7b --layers 4 --batch-tokens 4096 16384 32768 --iterations 3
fi
if wants e2e; then
  # Pre-tokenized 256-token documents through the whole pipeline (loader, packer,
  # forward, writer), the output on tmpfs so the disk does not decide.
  work=/dev/shm/actex-e2e
  rm -rf "$work" && mkdir -p "$work"
  python3 - "$work/corpus.jsonl" <<'EOF'
import json, random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    for _ in range(4096):
        f.write(json.dumps({"input_ids": [random.randrange(151936) for _ in range(256)]}) + "\n")
EOF
  step make_model 120 "error" actex make-model --preset qwen2.5-0.5b --dtype bfloat16 \
    --out "$work/model"
  for precision in fp32 bf16; do
    rm -rf "$work/out"
    start=$(date +%s.%N)
    step "e2e_$precision" 150 "ready|device shard|tokens|error|Error" actex extract \
      --model "$work/model" --data "$work/corpus.jsonl" --layers 23 --sites resid_post \
      --out "$work/out" --device cuda --precision "$precision" --dtype bfloat16 \
      --batch-tokens 16384 --blas-threads 8 --bos no
    end=$(date +%s.%N)
    python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); \
print(f'e2e {sys.argv[3]}: 1048576 tokens in {s:.1f} s wall = {1048576/s:.0f} tokens/s')" \
      "$start" "$end" "$precision"
  done
  rm -rf "$work"
fi
if wants hf; then
  step hf_0.5b 100 "tokens/s|best|GPU|Error" python3 bench/hf_throughput.py \
    --model qwen2.5-0.5b --batches 16,64,256 --seconds 2
  step hf_7b 100 "tokens/s|best|GPU|Error" python3 bench/hf_throughput.py \
    --model qwen2.5-7b --batches 16,64 --seconds 2
fi
