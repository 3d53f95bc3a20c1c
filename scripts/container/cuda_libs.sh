#!/usr/bin/env bash
# Copies the shared libraries BINARY loads from the CUDA toolkit CUDA_HOME (cuBLAS and
# cuBLASLt: the runtime is linked statically) into DEST under their sonames, for an
# image without the toolkit. With CUDA_HOME empty DEST is made empty (an image without
# CUDA). A library of the toolkit ldd cannot find is an error.
#
#   scripts/container/cuda_libs.sh BINARY CUDA_HOME DEST
set -euo pipefail
[ $# -eq 3 ] || { sed -n '2,/^$/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 2; }
binary=$1 cuda_home=$2 dest=$3
mkdir -p "$dest"
[ -n "$cuda_home" ] || exit 0
toolkit=$(realpath "$cuda_home")
if ldd "$binary" | grep -q 'not found'; then
  echo "cuda_libs.sh: $binary needs libraries ldd cannot find:" >&2
  ldd "$binary" | grep 'not found' >&2
  exit 1
fi
copied=0
# "libcublas.so.13 => /usr/local/cuda/lib/libcublas.so.13 (0x...)"
while read -r soname _ path _; do
  [ -n "$path" ] || continue
  case "$(realpath "$path")" in
    "$toolkit"/*) cp -L "$path" "$dest/$soname"; copied=$((copied + 1)) ;;
  esac
done < <(ldd "$binary" | grep '=> /')
[ "$copied" -gt 0 ] || { echo "cuda_libs.sh: $binary loads no library of $cuda_home" >&2; exit 1; }
echo "cuda_libs.sh: $copied libraries of $cuda_home into $dest ($(du -sh "$dest" | cut -f1))"
