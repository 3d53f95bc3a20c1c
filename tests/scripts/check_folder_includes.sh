#!/usr/bin/env bash
# The folder rule (see the top-level README): which folder may include which. Each
# folder's README.md owns its part of the rule in one line,
#
#   May include: `base/`, `storage/safetensors.h`.
#
# naming whole folders ("storage/") or single headers ("storage/safetensors.h"), or
# "everything"; any other word ("nothing") allows nothing. A folder may always include
# its own files. Folders whose README has no such line (tests/, docs/) are not checked.
#
#   check_folder_includes.sh SOURCE_DIR   lists every #include that crosses the rule
#                                          and fails when there is one
#   check_folder_includes.sh --self-test  proves the check fails on a crossing include
#                                          and passes on allowed ones
set -euo pipefail

# Prints what folder $2 under root $1 may include, one entry a line ("base/",
# "storage/safetensors.h", "everything"); returns 1 when its README states no rule.
allowed_of() {
  local root=$1 folder=$2 line entry
  line=$(grep -m1 '^May include: ' "$root/$folder/README.md" 2>/dev/null) || return 1
  line=${line#May include: }
  line=${line%.}
  while IFS= read -r entry; do
    entry=${entry//\`/}
    entry=${entry#"${entry%%[![:space:]]*}"}
    entry=${entry%"${entry##*[![:space:]]}"}
    [[ $entry == */* || $entry == everything ]] && echo "$entry"
  done <<<"${line//,/$'\n'}"
  return 0
}

# Whether $1 (an include path) is allowed by the entries in $2 (allowed_of's lines).
allowed_by() {
  local included=$1 entries=$2 entry
  while IFS= read -r entry; do
    [[ -z $entry ]] && continue
    [[ $entry == everything || $included == "$entry" ]] && return 0
    [[ $entry == */ && $included == "$entry"* ]] && return 0
  done <<<"$entries"
  return 1
}

# Prints "file:line: #include ..." for every crossing under root $1; returns 1 if any.
scan() {
  local root=$1 found=0 folder file line number included target entries project_folders
  project_folders=$(cd "$root" && for dir in */; do echo "${dir%/}"; done)
  for folder in $project_folders; do
    entries=$(allowed_of "$root" "$folder") || continue
    [[ $entries == *everything* ]] && continue
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
        [[ $included == */* ]] && grep -qxF "$target" <<<"$project_folders" || continue
        [[ $target == "$folder" ]] && continue
        allowed_by "$included" "$entries" && continue
        echo "${file#"$root"/}:$number: $line  ($folder/README.md: it may not include $target/)"
        found=1
      done <"$file"
    done < <(find "$root/$folder" -type f \( -name '*.h' -o -name '*.cc' \) -print0)
  done
  return $found
}

# self_test TREE: see folder_check.sh.
self_test() {
  local tree=$1
  mkdir -p "$tree/model/kernels" "$tree/storage" "$tree/transport" "$tree/coordination" \
    "$tree/actors" "$tree/base" "$tree/tests" "$tree/bench"
  echo 'May include: nothing of the project.' >"$tree/base/README.md"
  echo 'May include: `base/`.' >"$tree/storage/README.md"
  echo 'May include: `base/`, `storage/safetensors.h`.' >"$tree/model/README.md"
  echo 'May include: `base/`.' >"$tree/transport/README.md"
  printf '# coordination/\n\nMay include: `base/`, `storage/`, `transport/`.\n' \
    >"$tree/coordination/README.md"
  echo 'May include: everything.' >"$tree/actors/README.md"
  echo 'May include: `base/`, `storage/`, `model/`, `transport/`, `coordination/`, `actors/`, `tests/support/`.' >"$tree/bench/README.md"
  printf '#include "storage/safetensors.h"\n#include "model/kernels/linear.h"\n' \
    >"$tree/model/weights.cc"
  printf '#include "transport/wire.h"\n#include "coordination/lease_log.h"\n' >"$tree/actors/node.cc"
  printf '#include <vector>\n#include "transport/wire.h"\n#include "base/utf8.h"\n' \
    >"$tree/transport/actor.cc"
  printf '#include "storage/file_io.h"\n#include "transport/wire.h"\n#include "base/text.h"\n' \
    >"$tree/coordination/lease_log.cc"
  printf '#include "actors/node.h"\n#include "tests/support/parquet_test_writer.h"\n' \
    >"$tree/bench/corpus_bench.cc"
  if ! scan "$tree" >/dev/null; then
    echo "self-test: allowed includes were reported" >&2
    return 1
  fi
  local crossing
  for crossing in 'model/kernels/linear.cc:#include "storage/shard_writer.h"' \
                  'storage/reader.cc:#  include "transport/wire.h"' \
                  'transport/wire.cc:#include <model/tokenizer/tokenizer.h>' \
                  'transport/actor.h:#include "actors/node.h"' \
                  'transport/wire.h:#include "coordination/coordinator.h"' \
                  'storage/output_folder.cc:#include "coordination/lease_log.h"' \
                  'coordination/coordinator.cc:#include "actors/node_options.h"' \
                  'coordination/job_leases.h:#include "model/sites.h"' \
                  'storage/test_hook.cc:#include "tests/storage/temp_dir.h"' \
                  'storage/file.cc:#include "../model/config.h"' \
                  'base/utf8.cc:#include "storage/file_io.h"' \
                  'bench/shuffle_bench.cc:#include "tests/storage/temp_dir.h"'; do
    local file=${crossing%%:*}
    printf '%s\n' "${crossing#*:}" >"$tree/$file"
    if scan "$tree" >/dev/null; then
      echo "self-test: missed the crossing in $file: ${crossing#*:}" >&2
      return 1
    fi
    rm "$tree/$file"
  done
  # The rule is the README's: a folder whose README allows more passes.
  printf '#include "model/sites.h"\n' >"$tree/coordination/job_leases.h"
  echo 'May include: `base/`, `storage/`, `transport/`, `model/`.' >"$tree/coordination/README.md"
  if ! scan "$tree" >/dev/null; then
    echo "self-test: coordination/README.md allows model/, yet its include was reported" >&2
    return 1
  fi
  echo "self-test: allowed includes pass, every crossing is caught, each README owns its rule"
}

source "$(dirname "${BASH_SOURCE[0]}")/folder_check.sh"
folder_check_main "no #include crosses the folder rule" \
  "the lines above cross the folder rule (each folder's README.md says, on its 'May include:' line, which other folders it may include)" \
  "$@"
