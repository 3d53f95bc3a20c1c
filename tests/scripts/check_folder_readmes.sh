#!/usr/bin/env bash
# Every folder's README names every file of the folder, so a reader who opens the
# README finds each file's place (and a file added or moved without a word fails here).
#
# The folders checked are the top-level folders with a README.md, except tests/ and
# docs/ (fixtures' READMEs describe data, not code). A file is named when its stem (the
# name up to the first dot: `node` for node.h and node.cc) occurs as a whole word in the
# nearest README.md above it, so a subfolder without a README of its own is described
# by its parent's. CMakeLists.txt and the READMEs themselves need no mention.
#
#   check_folder_readmes.sh SOURCE_DIR   lists every file its README does not name and
#                                         fails when there is one
#   check_folder_readmes.sh --self-test  proves the check fails on an unnamed file and
#                                         passes on named ones
set -euo pipefail

readonly skipped_folders="tests docs build"

# The README.md nearest above file $2 inside folder $1 (the folder's own at worst).
nearest_readme() {
  local top=$1 dir
  dir=$(dirname "$2")
  while [[ ! -f $dir/README.md && $dir != "$top" ]]; do
    dir=$(dirname "$dir")
  done
  echo "$dir/README.md"
}

# Prints "README: file" for every file under root $1 its README does not name;
# returns 1 if any.
scan() {
  local root=$1 found=0 top file name readme
  for top in "$root"/*/; do
    top=${top%/}
    [[ -f $top/README.md ]] || continue
    [[ " $skipped_folders " == *" $(basename "$top") "* ]] && continue
    while IFS= read -r -d '' file; do
      name=$(basename "$file")
      [[ $name == CMakeLists.txt || $name == README.md ]] && continue
      readme=$(nearest_readme "$top" "$file")
      grep -qw -- "${name%%.*}" "$readme" && continue
      echo "${readme#"$root"/}: does not name ${file#"$root"/}"
      found=1
    done < <(find "$top" -type f -not -name '.*' -print0 | sort -z)
  done
  return $found
}

# self_test TREE: see folder_check.sh.
self_test() {
  local tree=$1
  mkdir -p "$tree/model/kernels" "$tree/model/tokenizer" "$tree/tests/model" "$tree/scripts"
  printf '| `gemm` | products |\n| `kernels/` | `rms_norm` |\n' >"$tree/model/README.md"
  printf 'BPE: `bpe_tokenizer.cc`\n' >"$tree/model/tokenizer/README.md"
  touch "$tree/model/gemm.h" "$tree/model/gemm.cc" "$tree/model/CMakeLists.txt" \
        "$tree/model/kernels/rms_norm.cc" "$tree/model/tokenizer/bpe_tokenizer.h" \
        "$tree/tests/model/anything_test.cc" "$tree/scripts/anything.sh"
  if ! scan "$tree" >/dev/null; then
    echo "self-test: named files were reported" >&2
    return 1
  fi
  local unnamed
  # A new file; a stem that is only part of a word; a subfolder's file its own README
  # does not name (the parent's mention does not count there).
  for unnamed in model/attention.cc model/gem.h model/tokenizer/gemm.h; do
    touch "$tree/$unnamed"
    if scan "$tree" >/dev/null; then
      echo "self-test: missed the unnamed file $unnamed" >&2
      return 1
    fi
    rm "$tree/$unnamed"
  done
  echo "self-test: named files pass, every unnamed file is caught"
}

source "$(dirname "${BASH_SOURCE[0]}")/folder_check.sh"
folder_check_main "every folder's README names every file of the folder" \
  "name each file above in its folder's README.md (what it owns, in a word or a table row)" \
  "$@"
