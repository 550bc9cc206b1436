#!/usr/bin/env bash
# Prepares what tests/gpu/capture_check.sh needs on the GPU machine, which has
# nvcc, CMake, ninja and Python's CUDA libraries but none of gpuscope's Debian
# build dependencies and no network. Run it HERE (Debian 12 with apt):
#
#   bash tests/gpu/capture_deps.sh
#
# It downloads the .deb files (about 2.5 MB) into build-gpu-deps/ (ignored by
# git through /build*/). capture_check.sh unpacks them into a private prefix on
# the GPU machine; nothing is installed there. Then, in one device call:
#
#   run(command="bash tests/gpu/capture_check.sh", carry=["build-gpu-deps"], timeout_s=600)
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(
  libzstd-dev libzstd1 libdeflate-dev libdeflate0 libisal-dev libisal2 libxxhash-dev libxxhash0
  libsimdjson-dev libsimdjson14 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
  pkgconf pkgconf-bin libpkgconf3
  libsqlite3-dev libsqlite3-0  # the export module's SQLite output: the project does not configure without it
  zlib1g-dev                   # its libz.so points at the system's /lib/x86_64-linux-gnu/libz.so.1
)
mkdir -p build-gpu-deps
cd build-gpu-deps
rm -f ./*.deb
apt-get download "${packages[@]}"
ls -l ./*.deb
du -sh .
