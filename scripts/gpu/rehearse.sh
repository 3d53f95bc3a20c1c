#!/usr/bin/env bash
# Here, before a GPU session spends its device time: the GPU run rehearsed without a GPU.
# What prepare.sh packed runs in a bare Debian chroot (debootstrap's minbase: glibc,
# libstdc++ and xz, none of our packages, like the GPU machine) with CUDA's libraries
# bind-mounted, from a copy of the tree as the device tool would copy it: `check.sh`
# itself (every GPU case must skip naming why, the benches fail at start), then a real
# CPU extraction by the packed `actex`, which `actex verify` checks. A library the
# tarball lacks, a binary that cannot start or a path check.sh gets wrong shows here.
#
# Usage: scripts/gpu/rehearse.sh [STEP...]   check.sh's steps (default: tests bench)
# Needs root, debootstrap, and deb.debian.org the first time (the chroot is kept in
# ${ACTEX_REHEARSAL_ROOT:-/var/tmp/actex-rehearsal}). Exit 1 when a packed binary misses
# a library, lists no case, or the extraction fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
tarball=build/gpu-carry/actex-gpu.tar.xz
[[ -f $tarball ]] || { echo "$0: no $tarball: run scripts/gpu/prepare.sh first" >&2; exit 1; }
cuda=$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")
root=${ACTEX_REHEARSAL_ROOT:-/var/tmp/actex-rehearsal}
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(tests bench)

if [[ ! -x $root/usr/bin/xz ]]; then
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
  chroot "$root" apt-get install -y xz-utils >/dev/null
fi
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" || true; done
}
trap cleanup EXIT
bind() {  # bind SOURCE TARGET-IN-ROOT [ro]
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounts+=("$root$2")
  [[ ${3:-} == ro ]] && mount -o remount,ro,bind "$root$2"
  return 0
}
bind /proc /proc
bind /dev /dev
bind "$cuda" /usr/local/cuda ro

# The tree as the device tool copies it: tracked files present, untracked ones git does
# not ignore, and the carried folder.
rm -rf "$root/tree" "$root/work" "$root/tmp/actex" "$root/tmp/rehearsal"
mkdir -p "$root/tree"
{ git ls-files -z --cached --others --exclude-standard; printf '%s\0' build/gpu-carry; } |
  while IFS= read -r -d '' file; do [[ -e $file ]] && printf '%s\0' "$file"; done |
  tar --null -cf - -T - | tar -xf - -C "$root/tree"
echo "tree copied: $(du -sb "$root/tree" | cut -f1) bytes"

status=0
chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp OUT=/tmp/rehearsal \
  bash -c "cd /tree && bash scripts/gpu/check.sh ${steps[*]}" | tee /tmp/actex-rehearsal.log
grep -qE "missing (binary|library)|listed no case" /tmp/actex-rehearsal.log && status=1

# A real extraction with the packed actex, on the CPU; --device cuda refused by name.
chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp bash -c '
  set -e
  cd /tree && eval "$(scripts/gpu/unpack.sh build/gpu-carry/actex-gpu.tar.xz /tmp/actex)"
  cd /tmp && rm -rf demo-model demo-out
  actex make-model --preset tiny --vocab 3259 --seed 7 --out demo-model \
    --tokenizer /tree/tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json 2>/dev/null
  actex extract --model demo-model --data /tree/scripts/demo/corpus.jsonl --out demo-out \
    --layers 0,1 --sites resid_post,mlp_out --shards 2 2>&1 | tail -1
  actex verify demo-out | tail -1
  actex extract --device cuda --model demo-model --data /tree/scripts/demo/corpus.jsonl \
    --out demo-cuda --layers 0 --sites resid_post 2>&1 | tail -1 || true' || status=1
echo "rehearsal: exit $status (log: /tmp/actex-rehearsal.log)"
exit "$status"
