#!/usr/bin/env bash
# Prepares a device call here (no GPU needed): packs the binaries built here with their shared
# libraries into build/gpu-carry/actex-gpu.tar.xz, moves the fixture folders the GPU run does
# not read out of the tree, and checks what would travel against the 64 MiB limit.
#
# Usage: scripts/gpu/prepare.sh [--build DIR] [--no-stash | --keep FOLDER...] [BINARY...]
#   --build DIR    the build folder (default build); BINARY paths are inside it
#                  (default: actors/actex)
#   --no-stash     keep every fixture folder in the tree
#   --keep FOLDER  keep this one (stash_fixtures.sh out --keep), e.g. moe-families
# Then call the device tool with carry ["build/gpu-carry"], and afterwards put the fixtures
# back: scripts/gpu/stash_fixtures.sh in
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
here=scripts/gpu
build=build
stash=1
keep=()
binaries=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --no-stash) stash=0; shift ;;
    --keep) keep+=(--keep "$2"); shift 2 ;;
    -*) echo "$0: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    *) binaries+=("$1"); shift ;;
  esac
done
[[ ${#binaries[@]} -eq 0 ]] && binaries=(actors/actex)

# build/ is ignored (.gitignore: /build*/), so the tarball travels only when a call carries it.
readonly carry=build/gpu-carry
mkdir -p "$carry"
"$here/package.sh" "$build" "$carry/actex-gpu.tar.xz" "${binaries[@]}"
if ((stash)); then
  "$here/stash_fixtures.sh" out "${keep[@]}"
fi
"$here/travel_size.sh" "$carry"
echo "next: the device call with carry [\"$carry\"]; there:" \
  "eval \"\$(scripts/gpu/unpack.sh $carry/actex-gpu.tar.xz /tmp/actex)\""
((stash)) && echo "afterwards, here: scripts/gpu/stash_fixtures.sh in"
exit 0
