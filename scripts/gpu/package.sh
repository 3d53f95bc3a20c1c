#!/usr/bin/env bash
# Packs binaries built here, with the shared libraries they load, into one xz tarball small
# enough to travel to the GPU machine (which has none of our Debian packages).
#
# Usage: scripts/gpu/package.sh BUILD_DIR OUT_TARBALL BINARY...
#   BINARY: a path inside BUILD_DIR (e.g. actors/actex, tests/gpu/gpu_test).
# The tarball unpacks to bin/ (the binaries) and lib/ (their libraries); run a binary there as
#   LD_LIBRARY_PATH=$PWD/lib:$CUDA_LIBS bin/actex ...
# Left out, because the GPU machine has its own (newer) copies and ours would clash with them:
#   - glibc's libraries and the C++ runtime (libc, libm, libpthread, libdl, librt, libresolv,
#     ld-linux, libgcc_s, libstdc++): its image is Ubuntu-24.04-like with a newer glibc and
#     libstdc++, both backward compatible with what Debian 12 built against;
#   - CUDA's libraries and the driver (libcuda, libcudart, libcublas, libcublasLt, libnvrtc,
#     libnvJitLink): it has CUDA 13's, the same major version as the nvcc here.
# Libraries opened with dlopen are not seen by ldd and are not packed.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 BUILD_DIR OUT_TARBALL BINARY..." >&2
  exit 2
fi
build_dir=$1
out=$2
shift 2

# Sonames the GPU machine provides (see the header comment).
system_libs='^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|ld-linux[-a-z0-9_]*|libgcc_s|libstdc\+\+)\.so'
cuda_libs='^(libcuda|libcudart|libcublas|libcublasLt|libnvrtc|libnvJitLink)\.so'

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"

declare -A packed=()  # soname -> resolved path, so each library is copied once
for binary in "$@"; do
  path="$build_dir/$binary"
  if [[ ! -x $path ]]; then
    echo "$0: $path is not an executable file (build it first, or check the path)" >&2
    exit 1
  fi
  missing=$(ldd "$path" | awk '/=> not found/ {print $1}')
  if [[ -n $missing ]]; then
    echo "$0: $path needs libraries ldd cannot find: $missing" >&2
    exit 1
  fi
  cp -L "$path" "$stage/bin/"
  # ldd lists the whole closure: "libfoo.so.1 => /usr/lib/.../libfoo.so.1.2 (0x...)".
  while read -r soname resolved; do
    [[ $soname =~ $system_libs || $soname =~ $cuda_libs ]] && continue
    packed[$soname]=$resolved
  done < <(ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done

for soname in "${!packed[@]}"; do
  # Copied under the soname (the name the loader asks for), following symlinks.
  cp -L "${packed[$soname]}" "$stage/lib/$soname"
done
chmod u+w "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true
strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true

echo "files (bytes, stripped):"
(cd "$stage" && find bin lib -type f -printf '%s\t%p\n' | sort -k2)
echo "total uncompressed: $(du -cb "$stage"/bin/* "$stage"/lib/* | tail -1 | cut -f1) bytes"

# xz -9e beat zstd -19 --long on actex's closure (scripts/gpu/README.md has the figures), and
# unpacks with any tar or with python3's tarfile, where the GPU machine may lack zstd.
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - bin lib | xz -9e -T2 >"$out"
echo "$out: $(stat -c %s "$out") bytes"
