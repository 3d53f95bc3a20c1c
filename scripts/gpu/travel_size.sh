#!/usr/bin/env bash
# Prints how many bytes a device run would copy to the GPU machine from this checkout, and
# whether that is under the tool's 64 MiB limit. What travels (the device tool's README):
# tracked files that exist in the working tree, untracked files git does not ignore, and the
# ignored paths a call carries (give those as arguments). Symbolic links travel as links.
#
# Usage: scripts/gpu/travel_size.sh [CARRIED_PATH...]   (paths relative to the repo root)
# Exit status: 0 under the limit, 1 over it.
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
readonly limit=$((64 * 1024 * 1024))

# Sums the sizes (lstat: a link counts as itself) of the NUL-separated paths on stdin, skipping
# those that do not exist (tracked files moved away, e.g. by stash_fixtures.sh).
sum_sizes() {
  local total=0 size
  while IFS= read -r -d '' path; do
    size=$(stat -c %s -- "$path" 2>/dev/null) || continue
    [[ -d $path && ! -L $path ]] && continue  # a submodule's folder: its files do not travel
    total=$((total + size))
  done
  echo "$total"
}

tracked=$(git ls-files -z --cached | sum_sizes)
untracked=$(git ls-files -z --others --exclude-standard | sum_sizes)
carried=0
for path in "$@"; do
  if [[ ! -e $path ]]; then
    echo "$0: carried path $path does not exist (relative to $(pwd))" >&2
    exit 2
  fi
  carried=$((carried + $(find "$path" \( -type f -o -type l \) -print0 | sum_sizes)))
done
total=$((tracked + untracked + carried))

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
printf '%-34s %12d bytes  %s\n' "tracked files present" "$tracked" "$(mib "$tracked")"
printf '%-34s %12d bytes  %s\n' "untracked, not ignored" "$untracked" "$(mib "$untracked")"
printf '%-34s %12d bytes  %s\n' "carried (${*:-none})" "$carried" "$(mib "$carried")"
printf '%-34s %12d bytes  %s\n' "total" "$total" "$(mib "$total")"
if ((total < limit)); then
  echo "under the 64 MiB limit by $(mib $((limit - total)))"
else
  echo "OVER the 64 MiB limit by $(mib $((total - limit))): stash fixtures" \
    "(scripts/gpu/stash_fixtures.sh out) or carry less" >&2
  exit 1
fi
