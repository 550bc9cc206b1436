#!/usr/bin/env bash
# Makes gpuscope's packages: a .deb (installs under /usr) and a .tar.gz of the
# same tree, in $BUILD_DIR/packages/ (docs/install.md).
#   scripts/package.sh          setup + configure (if needed) + build + cpack
# Environment: BUILD_DIR (default build), JOBS (default: cores).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

bash scripts/setup.sh
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
(cd "$BUILD_DIR" && cpack -G "DEB;TGZ")
echo "package:" "$BUILD_DIR"/packages/gpuscope_*.deb "$BUILD_DIR"/packages/gpuscope-*.tar.gz
