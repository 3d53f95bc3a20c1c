#!/usr/bin/env bash
# Checks an image built with `build.sh --cuda`: every library the binary links is in the
# image (CUDA's from the toolkit, the rest Debian's), and its GPU device shard is built
# in. Without a GPU, `actex extract --device cuda` must be refused before any work
# naming CUDA's reason (an image without CUDA says "built without CUDA" instead). With a
# GPU and NVIDIA's CDI specification on this host (nvidia-ctk cdi generate), a real
# extraction of the demo's model and corpus runs on it and `actex verify` passes.
# Needs root and the image; about a minute.
#
#   scripts/container/cuda_check.sh [--image actex:cuda]
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

image=actex:cuda
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "cuda_check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
podman image exists "$image" || {
  echo "cuda_check.sh: no image $image: run build.sh --cuda DIR" >&2
  exit 2
}
work=$(mktemp -d /var/tmp/actex-cuda-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The repository read-only at /src, a work folder at /work.
run() {
  podman run --rm "${podman_flags[@]}" -v "$repo:/src:ro" -v "$work:/work" "$@"
}
fail() { echo "cuda_check.sh: FAILED: $*" >&2; exit 1; }

libraries=$(run --entrypoint ldd "$image" /usr/local/bin/actex)
if grep -q 'not found' <<< "$libraries"; then
  fail "libraries missing from $image:"$'\n'"$(grep 'not found' <<< "$libraries")"
fi
grep -q 'libcublas\.so.* => /usr/local/lib/actex-cuda/' <<< "$libraries" ||
  fail "the binary does not load cuBLAS from /usr/local/lib/actex-cuda:"$'\n'"$libraries"
echo "cuda_check.sh: every library found; $(grep -c '=> /usr/local/lib/actex-cuda/' \
  <<< "$libraries") of them CUDA's, in /usr/local/lib/actex-cuda"

run "$image" make-model --preset tiny --vocab 3259 --seed 7 \
  --tokenizer /src/tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json \
  --out /work/model > "$work/make-model.log" 2>&1 || fail "make-model: $(cat "$work/make-model.log")"
extract=(extract --device cuda --model /work/model --data /src/scripts/demo/corpus.jsonl
  --out /work/out --layers 0,1 --dtype bfloat16)

cdi_spec=
for spec in /etc/cdi/nvidia.yaml /var/run/cdi/nvidia.yaml; do
  [ -r "$spec" ] && cdi_spec=$spec
done
if [ -z "$cdi_spec" ]; then
  # No GPU for containers here: refused up front, naming CUDA's reason, nothing written.
  if run "$image" "${extract[@]}" > "$work/extract.log" 2>&1; then
    fail "--device cuda ran without a GPU: $(cat "$work/extract.log")"
  fi
  grep -q -- '--device cuda: no usable GPU: ' "$work/extract.log" ||
    fail "--device cuda was not refused for want of a GPU: $(cat "$work/extract.log")"
  [ ! -e "$work/out" ] || fail "the refused run wrote $work/out"
  echo "cuda_check.sh: no GPU here (no CDI specification): refused as it should be:"
  tail -1 "$work/extract.log"
else
  run --device nvidia.com/gpu=all "$image" "${extract[@]}" > "$work/extract.log" 2>&1 ||
    fail "extract on the GPU: $(tail -20 "$work/extract.log")"
  grep -m1 'device shard(s) here on cuda' "$work/extract.log" ||
    fail "the ready line names no GPU: $(cat "$work/extract.log")"
  run "$image" verify /work/out > "$work/verify.log" 2>&1 ||
    fail "verify: $(tail -20 "$work/verify.log")"
  echo "cuda_check.sh: extracted on the GPU ($cdi_spec) and verified"
fi
echo "cuda_check.sh: OK"
