#!/usr/bin/env bash
# A real extraction from a fresh Debian 12 machine: install, build, make a small
# random Qwen2 model with the bundled byte-level BPE tokenizer, extract two layers'
# activations from the bundled corpus with 2 device shards, and read them back.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh actex
build=${BUILD_DIR:-build}
actex="$build/actors/actex"
rm -rf "$build/demo-model" "$build/demo-out"
"$actex" make-model --preset tiny --vocab 3259 --seed 7 \
  --tokenizer tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json --out "$build/demo-model"
"$actex" extract --model "$build/demo-model" --data scripts/demo/corpus.jsonl \
  --out "$build/demo-out" --layers 0,1 --sites resid_post,mlp_out --shards 2 \
  --shard-size 256KB --dtype float32
"$actex" inspect "$build/demo-out"
# The same model over a FineWeb-Edu-shaped Parquet file (snappy, dictionary falling back to
# plain pages) followed by the JSONL corpus: formats are told by content.
rm -rf "$build/demo-out-parquet"
"$actex" extract --model "$build/demo-model" \
  --data tests/fixtures/parquet/fineweb-snappy-v1-dictfallback.parquet scripts/demo/corpus.jsonl \
  --out "$build/demo-out-parquet" --layers 0,1 --max-seq-len 256 --dtype bfloat16
"$actex" inspect "$build/demo-out-parquet"
"$actex" verify "$build/demo-out-parquet"
/usr/bin/python3 scripts/read_activations.py "$build/demo-out/host_00/shard_000001.safetensors"
