#!/usr/bin/env bash
# The folder rule (see the top-level README): model/, storage/ and transport/ never
# include each other's internals, and none of them includes actors/; the one
# exception is model/ reading storage/safetensors.h. All may include base/, which
# includes none of them. actors/ may include everything.
#
#   check_folder_includes.sh SOURCE_DIR   lists every #include that crosses the rule
#                                          and fails when there is one
#   check_folder_includes.sh --self-test  proves the check fails on a crossing include
#                                          and passes on allowed ones
set -euo pipefail

# Allowed "folder -> included path" pairs across folders, one per line.
readonly allowed_crossings="model -> storage/safetensors.h"
readonly guarded_folders="base model storage transport"
readonly project_folders="base model storage transport actors bench tests"

# Prints "file:line: #include ..." for every crossing under root $1; returns 1 if any.
scan() {
  local root=$1 found=0 folder file line number included target
  for folder in $guarded_folders; do
    [[ -d $root/$folder ]] || continue
    while IFS= read -r -d '' file; do
      number=0
      while IFS= read -r line || [[ -n $line ]]; do
        number=$((number + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"\<]([^\"\>]+)[\"\>] ]] || continue
        included=${BASH_REMATCH[1]}
        if [[ $included == *../* ]]; then
          echo "${file#"$root"/}:$number: $line  (relative includes hide which folder is read)"
          found=1
          continue
        fi
        target=${included%%/*}
        [[ $included == */* && " $project_folders " == *" $target "* ]] || continue
        [[ $target == "$folder" ]] && continue
        [[ $target == base && $folder != base ]] && continue
        grep -qxF "$folder -> $included" <<<"$allowed_crossings" && continue
        echo "${file#"$root"/}:$number: $line  ($folder/ may not include $target/)"
        found=1
      done <"$file"
    done < <(find "$root/$folder" -type f \( -name '*.h' -o -name '*.cc' \) -print0)
  done
  return $found
}

# self_test TREE: see folder_check.sh.
self_test() {
  local tree=$1
  mkdir -p "$tree/model/kernels" "$tree/storage" "$tree/transport" "$tree/actors" "$tree/base"
  printf '#include "storage/safetensors.h"\n#include "model/kernels/linear.h"\n' \
    >"$tree/model/weights.cc"
  printf '#include "transport/wire.h"\n#include "storage/x.h"\n' >"$tree/actors/node.cc"
  printf '#include <vector>\n#include "transport/wire.h"\n#include "base/utf8.h"\n' \
    >"$tree/transport/actor.cc"
  if ! scan "$tree" >/dev/null; then
    echo "self-test: allowed includes were reported" >&2
    return 1
  fi
  local crossing
  for crossing in 'model/kernels/linear.cc:#include "storage/shard_writer.h"' \
                  'storage/reader.cc:#  include "transport/wire.h"' \
                  'transport/wire.cc:#include <model/tokenizer/tokenizer.h>' \
                  'transport/actor.h:#include "actors/node.h"' \
                  'storage/file.cc:#include "../model/config.h"' \
                  'base/utf8.cc:#include "storage/file_io.h"'; do
    local file=${crossing%%:*}
    printf '%s\n' "${crossing#*:}" >"$tree/$file"
    if scan "$tree" >/dev/null; then
      echo "self-test: missed the crossing in $file: ${crossing#*:}" >&2
      return 1
    fi
    rm "$tree/$file"
  done
  echo "self-test: allowed includes pass, every crossing is caught"
}

source "$(dirname "${BASH_SOURCE[0]}")/folder_check.sh"
folder_check_main "no #include crosses the folder rule" \
  "the lines above cross the folder rule (model/, storage/, transport/ keep to themselves; only model/ may include storage/safetensors.h)" \
  "$@"
