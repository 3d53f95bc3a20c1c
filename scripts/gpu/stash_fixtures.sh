#!/usr/bin/env bash
# Moves the fixture folders a GPU run does not read out of the working tree, so that they do not
# count towards the 64 MiB a device call copies, and puts them back afterwards.
#
# Usage: scripts/gpu/stash_fixtures.sh out [--keep FOLDER]...  # tests/fixtures/{...} -> stash
#        scripts/gpu/stash_fixtures.sh in                       # back, exactly as they were
# Moved: parquet, sae, real-tokenizers, tokenizers and moe-families, less those --keep names
# (--keep moe-families for the MoE parity: 13.3 MB more travels). The GPU run always keeps
# qwen2-tiny and model-families (its parity fixtures).
# The stash is /var/tmp/actex-gpu-stash unless ACTEX_GPU_STASH names another folder. It records
# which checkout it came from; `in` refuses another checkout, `out` refuses a second stash.
set -euo pipefail

readonly stash=${ACTEX_GPU_STASH:-/var/tmp/actex-gpu-stash}
repo=$(git rev-parse --show-toplevel)
readonly repo

case ${1:-} in
  out)
    stashable=(parquet sae real-tokenizers tokenizers moe-families)
    kept=" "
    shift
    while [[ $# -gt 0 ]]; do
      if [[ $1 != --keep || $# -lt 2 || " ${stashable[*]} " != *" $2 "* ]]; then
        echo "$0: out takes --keep FOLDER, FOLDER one of: ${stashable[*]}" >&2
        exit 2
      fi
      kept+="$2 "
      shift 2
    done
    folders=()
    for folder in "${stashable[@]}"; do
      [[ $kept == *" $folder "* ]] || folders+=("$folder")
    done
    if [[ -e $stash ]]; then
      echo "$0: $stash already exists (stashed from $(cat "$stash/checkout" 2>/dev/null ||
        echo 'an unknown checkout')): run '$0 in' first" >&2
      exit 1
    fi
    for folder in "${folders[@]}"; do
      if [[ ! -d $repo/tests/fixtures/$folder ]]; then
        echo "$0: $repo/tests/fixtures/$folder is missing; nothing was moved" >&2
        exit 1
      fi
    done
    mkdir -p "$stash"
    echo "$repo" >"$stash/checkout"
    for folder in "${folders[@]}"; do
      mv "$repo/tests/fixtures/$folder" "$stash/$folder"
    done
    echo "moved tests/fixtures/{$(IFS=,; echo "${folders[*]}")} to $stash ($(du -sb "$stash" | cut -f1) bytes)"
    ;;
  in)
    if [[ ! -f $stash/checkout ]]; then
      echo "$0: no stash at $stash (nothing to put back)" >&2
      exit 1
    fi
    if [[ $(cat "$stash/checkout") != "$repo" ]]; then
      echo "$0: $stash belongs to $(cat "$stash/checkout"), not $repo: run it there" >&2
      exit 1
    fi
    folders=()
    for entry in "$stash"/*/; do
      folders+=("$(basename "$entry")")
    done
    for folder in "${folders[@]}"; do
      if [[ -e $repo/tests/fixtures/$folder ]]; then
        echo "$0: $repo/tests/fixtures/$folder exists again; move it aside, then rerun" >&2
        exit 1
      fi
    done
    for folder in "${folders[@]}"; do
      mv "$stash/$folder" "$repo/tests/fixtures/$folder"
    done
    rm "$stash/checkout"
    rmdir "$stash"
    echo "put tests/fixtures/{$(IFS=,; echo "${folders[*]}")} back from $stash"
    git -C "$repo" status --short -- tests/fixtures
    ;;
  *)
    echo "usage: $0 out [--keep FOLDER]... | in" >&2
    exit 2
    ;;
esac
