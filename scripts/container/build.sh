#!/usr/bin/env bash
# Builds the actex OCI image with podman, without any registry: a Debian 12 (bookworm)
# root file system made by debootstrap becomes the base image, then the Containerfile
# beside this script builds actex in one stage and copies it into a slim runtime stage.
#
#   scripts/container/build.sh [--tag actex:latest] [--mirror URL] [--rebuild-base]
#                              [--cuda DIR [--cuda-architectures LIST]]
#
# --mirror: the Debian archive to debootstrap from (default: the bookworm entry of this
#           machine's own apt sources). The image's apt uses the same mirror.
# --rebuild-base: debootstrap again even if the base image (actex-base:bookworm) exists.
# --cuda DIR: build with the CUDA toolkit in DIR (e.g. /usr/local/cuda; not a Debian 12
#           package), mounted read-only into the build stage, so that the image runs
#           --device cuda; its cuBLAS libraries go into the image (~600 MB more), the
#           GPU driver comes from the host at run time. Default tag then actex:cuda.
# --cuda-architectures LIST: the GPUs' compute capabilities to compile for, as CMake's
#           CUDA_ARCHITECTURES (default 80-real;90: A100 and 8.x, H100/H200, and PTX).
# ACTEX_CCACHE_DIR=DIR: a ccache folder mounted into the build stage (optional, faster
#           rebuilds). JOBS: compile jobs (default 2).
# Needs root; installs podman and debootstrap itself on a fresh Debian 12 machine.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
here="$repo/scripts/container"


tag=
base=actex-base:bookworm
mirror=
rebuild_base=0
cuda_home=
cuda_architectures=
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --cuda) cuda_home=$2; shift 2 ;;
    --cuda-architectures) cuda_architectures=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "build.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

cuda_build=()
if [ -n "$cuda_home" ]; then
  [ -x "$cuda_home/bin/nvcc" ] || { echo "build.sh: --cuda $cuda_home: no bin/nvcc there" >&2; exit 2; }
  # Mounted at its own real path: the toolkit's links and nvcc.profile stay valid.
  cuda_home=$(realpath "$cuda_home")
  cuda_build=(-v "$cuda_home:$cuda_home:ro" --build-arg CUDA_HOME="$cuda_home")
  [ -z "$cuda_architectures" ] ||
    cuda_build+=(--build-arg CUDA_ARCHITECTURES="$cuda_architectures")
  tag=${tag:-actex:cuda}
fi
tag=${tag:-actex:latest}
[ -z "$cuda_architectures" ] || [ -n "$cuda_home" ] ||
  { echo "build.sh: --cuda-architectures needs --cuda DIR" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || { echo "build.sh: run as root (debootstrap and podman need it)" >&2; exit 2; }
# What a fresh Debian 12 machine lacks: podman with its network stack and DNS (the
# container test names hosts; netavark sets up its firewall rules with iptables, which
# podman only recommends), runc, debootstrap, git (it lists the build context).
packages=(podman netavark aardvark-dns iptables runc debootstrap debian-archive-keyring
  ca-certificates git)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'ok installed' ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The first URI of an apt source that serves bookworm itself (not -updates/-security),
# from deb822 .sources files or one-line sources.list entries.
apt_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -r "$file" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
         { uri = ""; bookworm = 0
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^URIs:/) { split($i, words, " "); uri = words[2] }
             if ($i ~ /^Suites:/ && $i ~ /[ \t]bookworm([ \t]|$)/) bookworm = 1
           }
           if (bookworm && uri != "") { print uri; exit } }' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$file" ] || continue
    awk '$1 == "deb" && $3 == "bookworm" { print $2 }' "$file"
  done
}
if [ -z "$mirror" ]; then
  mirror=$(apt_mirror | sed -n 1p)
  [ -n "$mirror" ] || { echo "build.sh: no bookworm entry in /etc/apt/sources*; give --mirror URL" >&2; exit 2; }
fi

if [ "$rebuild_base" -eq 1 ] || ! podman image exists "$base"; then
  rootfs=$(mktemp -d /var/tmp/actex-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  echo "build.sh: debootstrap bookworm from $mirror" >&2
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --message "debootstrap bookworm" - "$base"
  rm -rf "$rootfs"
  trap - EXIT
fi

# The build context: the files git tracks or would track (not build/ or other ignored
# output), so the image is the working tree's code, committed or not.
context=$(mktemp -d /var/tmp/actex-context.XXXXXX)
trap 'rm -rf "$context"' EXIT
# (A tracked file deleted in the working tree is left out: --ignore-failed-read.)
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  tar -c --null -T - --ignore-failed-read 2>/dev/null | tar -C "$context" -x)

ccache_mount=()
if [ -n "${ACTEX_CCACHE_DIR:-}" ]; then
  mkdir -p "$ACTEX_CCACHE_DIR"
  ccache_mount=(-v "$ACTEX_CCACHE_DIR:/ccache")
fi
podman build "${podman_flags[@]}" "${ccache_mount[@]}" "${cuda_build[@]}" --build-arg BASE="$base" \
  --build-arg JOBS="${JOBS:-2}" -f "$here/Containerfile" -t "$tag" "$context"
echo "build.sh: built $tag, $(podman image inspect "$tag" --format '{{.Size}}' |
  awk '{ printf "%.1f MB", $1 / 1e6 }')" >&2
