#!/usr/bin/env bash
# Sets everything up and runs gpuscope's tests (the README's second command).
#   scripts/test.sh            setup + configure + build + ctest
# Environment: BUILD_DIR (default build), JOBS (default: cores).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

bash scripts/setup.sh
bash scripts/check_format.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS" --timeout 900
