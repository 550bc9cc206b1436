#!/usr/bin/env bash
# Installs every Debian package gpuscope builds, tests and runs with.
# Used by the README's two commands and by CI (.ci/run). Safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang clang-format libclang-rt-14-dev
  libzstd-dev libdeflate-dev libisal-dev zlib1g-dev libxxhash-dev libre2-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  libimgui-dev libglfw3-dev libstb-dev libgl-dev fonts-dejavu-core
  xvfb xauth xdotool libgl1-mesa-dri mesa-utils libxml2-utils zsh fish groff-base
  libopenmpi-dev openmpi-bin
  valgrind
  python3 python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pandas python3-pytest
  python3-pip python3-setuptools python3-wheel python3-venv
  python3-torch libtorch-dev
  dpkg-dev file
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
