#!/usr/bin/env bash
# GPU check of gpuscope's CUPTI capture, in one call on the GPU
# machine, from the repository root:
#
#   here:        bash tests/gpu/capture_deps.sh            (once: build dependencies)
#   GPU machine: run(command="bash tests/gpu/capture_check.sh", carry=["build-gpu-deps"], timeout_s=600)
#
# It builds (viewer off) and then:
#  1. runs the capture unit tests with a GPU present;
#  2. captures tests/capture/capture_workload.cu (two overlapping streams, NVTX
#     ranges, pageable and pinned copies, memsets, a CUDA graph, an NCCL
#     all-reduce) through `gpuscope capture`, in-process, and with both capture
#     ranges, and checks each trace against what the program did (capture_verify);
#     then exit status, SIGTERM mid-run, CUPTI already taken (the program's own
#     start() against the injected library), fork without exec, two CUDA
#     children with -o %r %h %n, no visible GPU, --delay/--duration, a PyTorch
#     script (if python3 has torch with CUDA);
#  3. measures overhead: launch_bench (200k empty kernels) with and without
#     capture, interleaved, medians (target <= 1 us per launch); 60 s at full
#     launch rate (target: zero dropped records, memory bounded by the pool:
#     peak RSS after 60 s close to that after 15 s); resnet-train --preset tuned
#     with and without capture if it was built (target <= 3% step time).
# Output: tests/gpu/results/capture-<UTC time>.log (everything) and .md (the
# table with date, GPU, driver), also copied to $OUT when $OUT is set (the GPU machine's output folder).
# Exit status 0 when every check that ran passed.
# Knobs: CAPTURE_CHECK_BUDGET_S (default 540: optional parts are skipped when
# time runs short), CAPTURE_CHECK_SKIP_RESNET=1, CAPTURE_CHECK_JOBS,
# CAPTURE_CHECK_BUILD_DIR (default build-gpu), CAPTURE_CHECK_RESULTS (default
# tests/gpu/results). Dry run without a GPU (checks the script, not capture):
#   CAPTURE_CHECK_PREBUILT=build CAPTURE_CHECK_RESULTS=/tmp/cc CAPTURE_CHECK_BUDGET_S=200 bash tests/gpu/capture_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/gpu/lib/common.sh
source tests/gpu/lib/capture.sh
START=$(date +%s)
BUDGET=${CAPTURE_CHECK_BUDGET_S:-540}
JOBS=${CAPTURE_CHECK_JOBS:-$(nproc)}
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
RES=${CAPTURE_CHECK_RESULTS:-tests/gpu/results}
mkdir -p "$RES"
LOG="$RES/capture-$STAMP.log"
TABLE="$RES/capture-$STAMP.md"
WORK=$(mktemp -d /tmp/gpuscope-capture-check-XXXXXX)
exec > >(tee "$LOG") 2>&1

left() { echo $((BUDGET - ($(date +%s) - START))); }
cap() { local l; l=$(left); ((l < $1)) && echo $((l > 5 ? l : 5)) || echo "$1"; }
say() { printf '\n==== %s (t=%ss)\n' "$*" "$(($(date +%s) - START))"; }
ROWS=()
FAILED=0
row() {  # check, target, measured, PASS|FAIL|SKIP|INFO
  ROWS+=("| $1 | $2 | $3 | $4 |")
  [ "$4" = FAIL ] && FAILED=$((FAILED + 1))
  echo "RESULT: $1: $3 -> $4"
}

finish() {
  {
    echo "# gpuscope capture GPU check, $STAMP"
    echo
    echo "- date: $(date -u +%F), GPU: ${GPU:-?}, driver: ${DRIVER:-?}, CUDA: ${CUDA:-?}, CUPTI: ${CUPTI:-?}"
    echo "- commit: ${COMMIT:-?}; command: \`bash tests/gpu/capture_check.sh\`; log: $(basename "$LOG")"
    echo
    echo "| check | target | measured | result |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "$FAILED check(s) failed."
  } >"$TABLE"
  cat "$TABLE"
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$LOG" "$TABLE" "$OUT/" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap finish EXIT

# ---- machine --------------------------------------------------------------------------------
say "machine"
date -u
uname -a
nvidia-smi || true

# ---- dependencies (carried .debs, unpacked privately; Python's cuDNN/NCCL) -------------------
say "dependencies"
gpu_deps_setup "$WORK"
# CUPTI: the toolkit's.
CUPTI_SO=$(ls /usr/local/cuda/lib64/libcupti.so.13* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13* 2>/dev/null | head -1)
CUPTI=$(basename "${CUPTI_SO:-none}")
echo "CUPTI: ${CUPTI_SO:-not in the toolkit}"
gpu_machine_info
GPU=$GPU_NAME DRIVER=$GPU_DRIVER CUDA=$CUDA_VERSION
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo "working tree")
echo "GPU=$GPU DRIVER=$DRIVER CUDA=$CUDA runtime: $GPU_RUNTIME"

# ---- build ----------------------------------------------------------------------------------
say "build"
B=${CAPTURE_CHECK_BUILD_DIR:-build-gpu}
TARGETS=(gpuscope gpuscope_inject capture_workload capture_smoke launch_bench capture_verify capture_tests)
HAVE_RESNET=0
if [ -n "${CAPTURE_CHECK_PREBUILT:-}" ]; then
  # Dry run of the script itself (e.g. on a machine without a GPU): use a build that exists.
  B=$CAPTURE_CHECK_PREBUILT
  for t in bin/gpuscope lib/gpuscope/libgpuscope_inject.so tests/capture_workload tests/capture_smoke tests/launch_bench \
    tests/capture_verify tests/capture_tests; do
    [ -e "$B/$t" ] || { row build "prebuilt in $B" "missing $t" FAIL; exit 1; }
  done
  [ "${CAPTURE_CHECK_SKIP_RESNET:-0}" != 1 ] && [ -x "$B/bin/resnet-train" ] && HAVE_RESNET=1
else
  gpu_configure $B "$WORK/configure.log" || { tail -20 "$WORK/configure.log"; row build "configures" "cmake failed" FAIL; exit 1; }
  timeout 400 cmake --build $B -j "$JOBS" --target "${TARGETS[@]}" || { row build "builds" "build failed" FAIL; exit 1; }
  if [ "${CAPTURE_CHECK_SKIP_RESNET:-0}" != 1 ] && gpu_has_target $B resnet-train; then
    timeout $(( $(left) > 300 ? 240 : 60 )) cmake --build $B -j "$JOBS" --target resnet-train && HAVE_RESNET=1
  fi
fi
row build "builds" "ok ($(($(date +%s) - START)) s)" PASS
GS=$B/bin/gpuscope
T=$B/tests
NCCL_FLAG=""  # set by capture_known_work if capture_workload was built without NCCL

# ---- 1. unit tests with a GPU present -------------------------------------------------------
say "unit tests"
if timeout 180 $T/capture_tests --gtest_brief=1; then row "capture_tests (GPU present)" "all pass" "pass" PASS
else row "capture_tests (GPU present)" "all pass" "failures, see log" FAIL; fi

# ---- 2. traces of known work, processes, refusals, timing ------------------------------------
capture_known_work
capture_exit_signals 8
capture_busy
capture_processes
capture_window
capture_pytorch_script

# ---- 3. overhead ----------------------------------------------------------------------------
capture_launch_overhead 5 200000
if [ "$(left)" -gt 120 ]; then
  capture_full_rate 60 15
else
  row "60 s at full launch rate" "0 dropped" "skipped: out of time" SKIP
fi
if [ $HAVE_RESNET = 1 ] && [ "$(left)" -gt 150 ]; then
  capture_resnet_overhead $B/bin/resnet-train 3 200
else
  row "resnet-train tuned step time overhead" "<= 3%" "skipped ($([ $HAVE_RESNET = 1 ] && echo 'out of time' || echo 'resnet-train not built'))" SKIP
fi

say "done"
exit $((FAILED > 0))
