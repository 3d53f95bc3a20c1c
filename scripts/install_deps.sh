#!/usr/bin/env bash
# Installs the Debian 12 packages actex builds, tests and runs with. Needs root
# (or sudo); safe to run again.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libopenblas-dev libdnnl-dev libspdlog-dev zlib1g-dev
  libsentencepiece-dev nlohmann-json3-dev libcli11-dev libpcre2-dev libutf8proc-dev
  libsodium-dev libisal-dev libgtest-dev libgmock-dev libbenchmark-dev python3-numpy python3-torch
  # The build: the CUDA emulator's kernels are translated by a python3 script.
  python3
  # The Parquet corpus reader (storage/parquet): footer and page headers, codecs.
  libthrift-dev libsnappy-dev libzstd-dev liblz4-dev libbrotli-dev
  # The fuzz tests (tests/fuzz): libFuzzer comes with clang; clang-16 rather than
  # Debian's default clang-14, which cannot compile std::expected from libstdc++ 12.
  clang-16 libclang-rt-16-dev
  # The network tests (label network): hosts in network namespaces, links cut with nft.
  iproute2 nftables
)
run_as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -qq
run_as_root apt-get install -y -qq --no-install-recommends "${packages[@]}"
