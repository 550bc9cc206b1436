#!/usr/bin/env bash
# GPU check of the bundled workload (resnet-train), for a machine with
# a GPU (the project's GPU machine: one H200, no internet; cuDNN/NCCL possibly only in
# Python's site-packages). One call, under 10 minutes:
#
#   here (Debian, apt):  bash tests/gpu/capture_deps.sh      # once: the build's .debs into build-gpu-deps/
#   GPU machine:         run(command="bash tests/gpu/workload_check.sh", carry=["build-gpu-deps"], timeout_s=600)
#
#  1. build (viewer and benchmarks off): resnet-train, workload_kernel_check,
#     gpuscope; if the whole project cannot configure, a standalone build of
#     the workload and its kernel check (tests/gpu/workload_build; no captures)
#  2. every CUDA kernel against its C++ reference (workload_kernel_check:
#     fresh random inputs, poisoned outputs, stated tolerances)
#  3. --verify: one step of the whole network against the CPU reference, for
#     both presets and switch combinations that cover every code path
#  4. both presets train and their loss falls
#  5. throughput of seed and tuned
#  6. the same network in PyTorch (eager channels_last + bf16 autocast, and
#     torch.compile): `tuned vs eager: N.NNx`, `tuned vs compile: N.NNx`
#  7. captures of --preset seed and --preset tuned (20 timed steps each) judged
#     by workload_profile_shape.py: seed has padding + broadcast >= 30% and no
#     concurrency, tuned has neither; the captures become assets/workload-*.gscope;
#     the seed capture's op table has a row per layer range, forward and
#     backward (tests/gpu/workload_layers.txt; tuned runs as a CUDA graph, whose
#     replays carry no layer ranges)
#  8. gradients bit-identical across ranks after every step (--check-sync) with
#     2 GPUs when there are 2 (one GPU: NCCL refuses two ranks on one device, so
#     only the one-rank path runs), and under mpirun when built with MPI
#  9. throughput of each single switch flipped from seed (as time allows)
# 10. what-if: `gpuscope whatif` on the seed capture predicts each switch's
#     speedup (--remove padding for --padding fused, ...), against the speedup
#     measured in 9; a table of both and the error (the goal: within 10 %)
#
# Sections run in that order against a time budget (WORKLOAD_CHECK_BUDGET
# seconds, default 560); what does not fit is reported as skipped, never
# silently dropped. Writes RESULTS/workload-<UTC stamp>.log (everything) and
# .md (the table, with date, GPU and driver); with $OUT set (the GPU machine's output folder)
# copies them, the per-step logs and the captures there. Exit status 0 when
# every check that ran passed.
#
# Environment (for the CPU dry run, tests/workload/gpu_check_dry_run.sh):
#   WORKLOAD_CHECK_BIN      directory with prebuilt resnet-train, gpuscope,
#                           workload_kernel_check: no build
#   WORKLOAD_CHECK_RESULTS  results directory (default tests/gpu/results)
#   WORKLOAD_CHECK_ASSETS   where the captures go (default assets)
#   WORKLOAD_CHECK_PYTORCH  the baseline command (default: python3 tests/gpu/pytorch_baseline.py)
#   WORKLOAD_CHECK_BUDGET   seconds for the whole run (default 560)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
source tests/gpu/lib/common.sh
source tests/gpu/lib/workload.sh
START=$(date +%s)
BUDGET=${WORKLOAD_CHECK_BUDGET:-560}
left() { echo $((BUDGET - ($(date +%s) - START))); }
# cap SECONDS: SECONDS, or less if the budget has less left (at least 5).
cap() { local l; l=$(left); ((l < $1)) && echo $((l > 5 ? l : 5)) || echo "$1"; }
stamp=$(date -u +%Y%m%d-%H%M)
results=${WORKLOAD_CHECK_RESULTS:-tests/gpu/results}
assets=${WORKLOAD_CHECK_ASSETS:-assets}
pytorch_cmd=${WORKLOAD_CHECK_PYTORCH:-python3 tests/gpu/pytorch_baseline.py}
tmp=$results/tmp-$stamp
mkdir -p "$results" "$tmp"
log=$results/workload-$stamp.log
table=$results/workload-$stamp.md
exec > >(tee "$log") 2>&1
tee_pid=$!
failures=()
skipped=()
notes=()
fail() { failures+=("$1"); echo "CHECK FAILED: $1"; }
skip() { skipped+=("$1"); echo "SKIPPED: $1"; }
section() { echo; echo "==== $* ($(date -u +%T), $(left) s left)"; }
# enough SECONDS NAME: whether SECONDS are left for section NAME (else it is skipped).
enough() { (($(left) >= $1)) && return 0; skip "$2 (out of time: $(left) s left, needs ~$1 s)"; return 1; }
JOBS=$(nproc)

finish() {
  # Everything printed has reached the log before it is copied.
  exec 1>&- 2>&-
  wait "$tee_pid" 2>/dev/null
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    mkdir -p "$OUT/results" "$OUT/assets"
    cp "$log" "$table" "$OUT/results/" 2>/dev/null
    cp "$tmp"/*.log "$tmp"/*.json "$OUT/results/" 2>/dev/null
    cp "$assets"/workload-*.gscope "$assets"/workload-captures.md "$OUT/assets/" 2>/dev/null
  fi
}
trap finish EXIT

section "environment"
date -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "GPU: ${gpu:-unknown} x ${ngpus:-0}, driver ${driver:-unknown}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>/dev/null
nvcc --version 2>/dev/null | tail -2
python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# ---- 1. build ------------------------------------------------------------------
section "build"
full_build=1
if [ -n "${WORKLOAD_CHECK_BIN:-}" ]; then
  bin=$WORKLOAD_CHECK_BIN
  check=$bin/workload_kernel_check
  echo "prebuilt binaries in $bin: no build"
else
  gpu_deps_setup "$tmp"
  bin=build-gpu/bin
  check=build-gpu/tests/workload_kernel_check
  if ! gpu_configure build-gpu "$tmp/configure.log"; then
    tail -5 "$tmp/configure.log"
    echo "full configure failed; building the workload alone (tests/gpu/workload_build; no gpuscope, no captures)"
    notes+=("standalone build: the project did not configure (carry build-gpu-deps from tests/gpu/capture_deps.sh)")
    full_build=0
    cmake -S tests/gpu/workload_build -B build-gpu-workload -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 "${GPU_CMAKE_HINTS[@]}" > "$tmp/configure.log" 2>&1 || { tail -20 "$tmp/configure.log"; fail "configure"; }
    bin=build-gpu-workload/bin
    check=build-gpu-workload/bin/workload_kernel_check
  fi
  grep -E "resnet-train:" "$tmp/configure.log"
  if [ "$full_build" = 1 ]; then
    # resnet-train first: the rest of the check needs it; gpuscope only for the captures.
    timeout "$(cap 360)" cmake --build build-gpu -j "$JOBS" --target resnet-train workload_kernel_check \
      > "$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; fail "build resnet-train"; }
    timeout "$(cap 240)" cmake --build build-gpu -j "$JOBS" --target gpuscope >> "$tmp/build.log" 2>&1 ||
      { tail -10 "$tmp/build.log"; notes+=("gpuscope did not build: captures judged without it"); }
  else
    timeout "$(cap 360)" cmake --build build-gpu-workload -j "$JOBS" > "$tmp/build.log" 2>&1 ||
      { tail -30 "$tmp/build.log"; fail "build"; }
  fi
  grep -E "warning" "$tmp/build.log" | tail -5
  echo "build took $(($(date +%s) - START)) s"
fi
rt=$bin/resnet-train
gs=$bin/gpuscope
[ -x "$rt" ] || { fail "resnet-train was not built"; exit 1; }
"$rt" --help | head -2

workload_init
# ---- 2. kernels vs references; 3. whole step vs the CPU reference ---------------------
workload_kernels
workload_verify "--preset seed" "--preset tuned" "--preset tuned --precision fp32" \
  "--preset tuned --precision tf32 --graphs off" "--preset seed --bn transpose" \
  "--preset seed --bn fused --bias fused --layout nhwc --data synthetic" \
  "--preset seed --padding fused --update overlap --allreduce bucketed" \
  "--preset tuned --layout nchw --bias broadcast --bn naive --data host"
# ---- 4. presets train; 5. throughput; 6. PyTorch on the same GPU ------------------------
workload_train
workload_throughput
workload_pytorch 150 30
# ---- 7. captures; 8. gradients across ranks ------------------------------------------------
workload_captures 20
workload_sync "${ngpus:-0}"
# ---- 9. single switches flipped from seed; 10. what-if against them -----------------------
workload_switches
workload_whatif

# ---- table -------------------------------------------------------------------------------------
section "results"
peak_bf16=989  # H100/H200 SXM dense BF16 TFLOP/s (tensor cores); fp32 non-tensor: 67
tuned_tf=$(grep "^| tuned " "$tmp/rows.md" | awk -F'|' '{gsub(/ /, "", $5); print $5}')
{
  echo "# resnet-train on ${gpu:-unknown GPU} ($(date -u +%F))"
  echo
  echo "GPU: ${gpu:-unknown} x ${ngpus:-0}; driver ${driver:-unknown}; $(nvcc --version 2>/dev/null | tail -1)"
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); command: bash tests/gpu/workload_check.sh"
  echo "(batch 128 per GPU, 1 GPU, 150 timed steps after 20 warmup; img/s from resnet-train's summary line)"
  echo
  echo "| configuration                | img/s/GPU | ms/step | model TFLOP/s |"
  echo "|------------------------------|-----------|---------|---------------|"
  cat "$tmp/rows.md"
  echo
  echo "PyTorch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo '?'): eager channels_last + bf16 autocast ${eager:-n/a} img/s; torch.compile ${compiled:-n/a} img/s"
  echo
  echo "$vs_eager"
  echo "$vs_compile"
  echo
  echo "tuned: ${tuned_tf:-n/a} model TFLOP/s = $(awk -v t="${tuned_tf:-0}" -v p=$peak_bf16 'BEGIN { printf "%.1f%%", 100 * t / p }') of the dense bf16 peak ($peak_bf16 TFLOP/s)"
  echo "tuned $(cat "$tmp/tuned-memory.txt" 2>/dev/null || echo 'memory: not measured')"
  echo "$kernels_line"
  echo "$verify_line"
  echo "training: seed ${train_line[seed]}; tuned ${train_line[tuned]}"
  echo "${shape_line[seed]}"
  echo "${shape_line[tuned]}"
  echo "$ops_line"
  echo "$sync_line"
  echo
  echo "$whatif_line"
  if [ -s "$tmp/whatif.md" ]; then
    echo
    echo "| switch               | gpuscope whatif change                   | predicted | measured  | error   | note |"
    echo "|----------------------|------------------------------------------|-----------|-----------|---------|------|"
    cat "$tmp/whatif.md"
  fi
  for n in "${notes[@]}"; do echo "note: $n"; done
  echo
  if ((${#skipped[@]})); then echo "skipped: ${skipped[*]}"; fi
  if ((${#failures[@]})); then echo "FAILED: ${failures[*]}"; else echo "all checks that ran passed"; fi
} > "$table"
cat "$table"
echo "took $(($(date +%s) - START)) s"
((${#failures[@]} == 0))
