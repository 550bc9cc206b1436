# shellcheck shell=bash disable=SC2034,SC2154  # sourced: its callers set and read its variables
# Shared by the GPU-machine scripts of tests/gpu/ (device_run.sh and the
# capture, workload and metrics checks): sourced, never run. The machine, its
# build dependencies, the build's configuration, and small numeric helpers.
# Functions only; nothing runs when the file is sourced.

# gpu_median: the median of the numbers on stdin ("nan" when there are none).
gpu_median() {
  sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

# gpu_values KEY FILE: every value of KEY=… in FILE, one a line.
gpu_values() { grep -o "$1=[0-9.]*" "$2" | cut -d= -f2; }

# gpu_header_version HEADER MAJOR MINOR PATCH: "M.m.p" from a library header's
# #defines (cudnn_version.h, nccl.h), or nothing.
gpu_header_version() {
  [ -r "$1" ] || return 0
  awk -v a="$2" -v b="$3" -v c="$4" '$1 == "#define" && $2 == a {x = $3} $1 == "#define" && $2 == b {y = $3}
    $1 == "#define" && $2 == c {z = $3} END {if (x != "") printf "%s.%s.%s", x, y, z}' "$1"
}

# gpu_runtime: which runtime the machine came up in, from its kernel (the GPU
# machine comes in two: gVisor reports kernel 4.4.0; Firecracker's kernels are
# named *-fc-*). Hardware counters load on Firecracker only (seen with ncu).
gpu_runtime() {
  local k
  k=$(uname -r)
  case $k in
    4.4.0) echo "gVisor (kernel $k)" ;;
    *-fc-* | *firecracker*) echo "Firecracker (kernel $k)" ;;
    *) echo "unknown (kernel $k)" ;;
  esac
}

# gpu_machine_info: sets GPU_NAME, GPU_COUNT, GPU_DRIVER, GPU_DRIVER_CUDA,
# CUDA_VERSION (nvcc), CUDNN_VERSION, NCCL_VERSION (the headers the build uses,
# after gpu_deps_setup; else PyTorch's), TORCH_VERSION (with its CUDA, cuDNN
# and NCCL) and GPU_RUNTIME. "none" for what is absent.
gpu_machine_info() {
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  GPU_COUNT=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  GPU_DRIVER_CUDA=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1 | cut -d' ' -f3)
  CUDA_VERSION=$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | cut -d' ' -f2)
  local torch
  torch=$(timeout 60 python3 -c 'import torch
b = torch.backends.cudnn
n = torch.cuda.nccl.version() if torch.cuda.is_available() else None
print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", b.version() if b.is_available() else None,
      "NCCL", ".".join(map(str, n)) if isinstance(n, tuple) else n)' 2>/dev/null)
  TORCH_VERSION=${torch:-none}
  CUDNN_VERSION=$(gpu_header_version "${GPU_CUDNN_INCLUDE:-/usr/local/cuda/include}/cudnn_version.h" CUDNN_MAJOR \
    CUDNN_MINOR CUDNN_PATCHLEVEL)
  NCCL_VERSION=$(gpu_header_version "${GPU_NCCL_INCLUDE:-/usr/local/cuda/include}/nccl.h" NCCL_MAJOR NCCL_MINOR \
    NCCL_PATCH)
  [ -n "$CUDNN_VERSION" ] || CUDNN_VERSION="none ($(echo "$TORCH_VERSION" | grep -o 'cuDNN [0-9A-Za-z]*' || echo 'no headers'))"
  [ -n "$NCCL_VERSION" ] || NCCL_VERSION="none ($(echo "$TORCH_VERSION" | grep -o 'NCCL [0-9.A-Za-z]*' || echo 'no headers'))"
  GPU_NAME=${GPU_NAME:-none}
  GPU_DRIVER=${GPU_DRIVER:-none}
  GPU_DRIVER_CUDA=${GPU_DRIVER_CUDA:-none}
  CUDA_VERSION=${CUDA_VERSION:-none}
  GPU_COUNT=${GPU_COUNT:-0}
  GPU_RUNTIME=$(gpu_runtime)
}

# gpu_deps_setup WORKDIR: makes the build's dependencies usable without
# installing anything. gpuscope's Debian build dependencies, carried as .debs
# (tests/gpu/capture_deps.sh), are unpacked into WORKDIR/deps; cuDNN and NCCL
# are the toolkit's, else the wheels Python's PyTorch brought (site-packages/
# nvidia/…). Sets GPU_CMAKE_HINTS (an array of -D flags), GPU_CUDNN_INCLUDE,
# GPU_NCCL_INCLUDE, and exports PATH, LD_LIBRARY_PATH, PKG_CONFIG_* and
# CMAKE_PREFIX_PATH.
gpu_deps_setup() {
  GPU_CMAKE_HINTS=()
  if compgen -G "build-gpu-deps/*.deb" >/dev/null; then
    local deps f zso sysz
    mkdir -p "$1/deps"
    deps=$(cd "$1/deps" && pwd)
    for f in build-gpu-deps/*.deb; do dpkg -x "$f" "$deps"; done
    [ -e "$deps/usr/bin/pkg-config" ] || ln -s pkgconf "$deps/usr/bin/pkg-config"
    # zlib1g-dev's libz.so names Debian's exact libz file; point it at this machine's.
    zso="$deps/usr/lib/x86_64-linux-gnu/libz.so"
    if [ -L "$zso" ] && [ ! -e "$zso" ]; then
      sysz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
      [ -n "$sysz" ] && ln -sf "$sysz" "$zso" && echo "libz.so -> $sysz"
    fi
    export PATH="$deps/usr/bin:$PATH"
    export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PKG_CONFIG_LIBDIR="$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig"
    export PKG_CONFIG_SYSROOT_DIR="$deps"
    export CMAKE_PREFIX_PATH="$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    echo "unpacked $(compgen -G "build-gpu-deps/*.deb" | wc -l) .debs into $deps"
  else
    echo "no build-gpu-deps/: using what is installed (run tests/gpu/capture_deps.sh here and carry it if the build fails)"
  fi
  local nv pkg upper so inc
  nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
  for pkg in cudnn nccl; do
    upper=$(echo "$pkg" | tr a-z A-Z)
    if ls /usr/local/cuda/lib64/lib$pkg.so* >/dev/null 2>&1 && [ -e /usr/local/cuda/include/$pkg.h ]; then
      echo "$pkg: the toolkit's"
      continue
    fi
    so=$(find "${nv:-/nonexistent}" -name "lib$pkg.so*" 2>/dev/null | sort | head -1)
    inc=$(find "${nv:-/nonexistent}" -name "$pkg.h" 2>/dev/null | head -1)
    if [ -n "$so" ] && [ -n "$inc" ]; then
      inc=$(dirname "$inc")
      GPU_CMAKE_HINTS+=("-DGPUSCOPE_${upper}_LIB=$so" "-DGPUSCOPE_${upper}_INCLUDE=$inc")
      printf -v "GPU_${upper}_INCLUDE" '%s' "$inc"
      LD_LIBRARY_PATH="$(dirname "$so")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      CMAKE_PREFIX_PATH="$(dirname "$inc")${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
      export LD_LIBRARY_PATH CMAKE_PREFIX_PATH
      echo "$pkg: $so (Python site-packages)"
    else
      echo "$pkg: not found in the toolkit or in Python's site-packages"
    fi
  done
  if [ -n "${GPU_CUDNN_INCLUDE:-}" ]; then
    CUDNN_ROOT=$(dirname "$GPU_CUDNN_INCLUDE")
    export CUDNN_ROOT
  fi
  return 0
}

# gpu_configure BUILD_DIR LOG: configures the project as the GPU machine can
# build it (CUDA on, for Hopper; no viewer: no GLFW/ImGui there; no Python
# module, no benchmarks), with gpu_deps_setup's hints. Output goes to LOG.
gpu_configure() {
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCOPE_CUDA=ON -DGPUSCOPE_VIEWER=OFF -DGPUSCOPE_PYTHON=OFF \
    -DGPUSCOPE_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90 "${GPU_CMAKE_HINTS[@]}" >"$2" 2>&1
}

# gpu_has_target BUILD_DIR TARGET: whether the configured build has TARGET.
gpu_has_target() { cmake --build "$1" --target help 2>/dev/null | grep -q "^$2:"; }
