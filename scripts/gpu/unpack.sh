#!/usr/bin/env bash
# Runs on the GPU machine: unpacks a package.sh tarball into DIR and prints the shell lines that
# put its bin/ on PATH and its lib/ plus CUDA's own libraries on LD_LIBRARY_PATH.
#
# Usage: eval "$(scripts/gpu/unpack.sh TARBALL DIR)"
# CUDA's libraries (libcudart, libcublas) are not in the tarball; the first folder found of
# $CUDA_HOME/lib64, /usr/local/cuda/{lib64,lib,targets/x86_64-linux/lib}, python3's
# site-packages/nvidia/*/lib (torch's wheels) and the loader cache that holds the libcublas
# soname the binaries need is used.
set -euo pipefail

readonly usage="usage: eval \"\$($0 TARBALL DIR)\""
tarball=${1:?$usage}
dir=${2:?$usage}
if [[ ! -f $tarball ]]; then
  echo "$0: $tarball does not exist (was it carried?)" >&2
  exit 1
fi
mkdir -p "$dir"
if command -v xz >/dev/null; then
  tar -C "$dir" -xJf "$tarball"
else  # python3's tarfile reads xz without the xz program
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="tar")' \
    "$tarball" "$dir"
fi
dir=$(cd "$dir" && pwd)

# The soname the binaries ask for (CUDA 13's): a CUDA 12 libcublas.so.12 beside it would
# not load them.
cublas=$(objdump -p "$dir"/bin/* 2>/dev/null | awk '/NEEDED +libcublas\.so/ {print $2; exit}' || true)
cublas=${cublas:-libcublas.so.13}
# Where CUDA's toolkit or torch's wheels (nvidia/cu13/lib, nvidia/cublas/lib) keep it.
candidates=("${CUDA_HOME:-/nonexistent}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib
  /usr/local/cuda/targets/x86_64-linux/lib)
for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
  candidates+=("$site"/nvidia/*/lib)
done
cuda_lib=""
for candidate in "${candidates[@]}"; do
  if [[ -e $candidate/$cublas ]]; then
    cuda_lib=$candidate
    break
  fi
done
if [[ -z $cuda_lib ]]; then
  found=$(ldconfig -p 2>/dev/null | awk -v name="$cublas" '$1 == name {print $NF; exit}')
  [[ -n $found ]] && cuda_lib=$(dirname "$found")
fi
[[ -z $cuda_lib ]] && echo "$0: no $cublas found; CUDA binaries will not load" >&2

echo "export PATH='$dir/bin':\"\$PATH\""
echo "export LD_LIBRARY_PATH='$dir/lib${cuda_lib:+:$cuda_lib}'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
