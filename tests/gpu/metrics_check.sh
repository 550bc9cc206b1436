#!/usr/bin/env bash
# GPU check of the hardware metrics a capture records (PM sampling and NVML),
# in one call on the GPU machine, from the repository root:
#
#   here:        bash tests/gpu/capture_deps.sh            (once: build dependencies)
#   GPU machine: run(command="bash tests/gpu/metrics_check.sh", carry=["build-gpu-deps"], timeout_s=600)
#
# (tests/gpu/device_run.sh runs these checks too, shortened, beside the others.)
# It builds gpuscope, the injection library and resnet-train (viewer off),
# then for `resnet-train --preset seed` and `--preset tuned`:
#  1. step time without capture, with capture and --gpu-metrics none, and with
#     capture and the default metrics at 10 kHz, interleaved: the sampling
#     overhead is the last against the second (target <= 1%);
#  2. from the trace with metrics: whether PM sampling ran at all (the
#     capture.gpu_metrics note: on a sandboxed GPU it says why not, and the
#     check then wants the NVML series instead), the samples lost, and the
#     means of hw.sm_active and hw.tensor_active (the seed preset is expected
#     to show lower SM activity than tuned).
# Output: tests/gpu/results/metrics-<UTC time>.log and .md (table with date,
# GPU, driver), also copied to $OUT when set. Exit 0 when every check passed.
# Knobs: METRICS_CHECK_BUILD_DIR (default build-gpu), METRICS_CHECK_PREBUILT
# (use that build as is), METRICS_CHECK_STEPS (default 150),
# METRICS_CHECK_BUDGET_S (default 560).
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/gpu/lib/common.sh
source tests/gpu/lib/metrics.sh
START=$(date +%s)
BUDGET=${METRICS_CHECK_BUDGET_S:-560}
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
RES=${METRICS_CHECK_RESULTS:-tests/gpu/results}
mkdir -p "$RES"
LOG="$RES/metrics-$STAMP.log"
TABLE="$RES/metrics-$STAMP.md"
WORK=$(mktemp -d /tmp/gpuscope-metrics-check-XXXXXX)
STEPS=${METRICS_CHECK_STEPS:-150}
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
    echo "# gpuscope hardware metrics GPU check, $STAMP"
    echo
    echo "- date: $(date -u +%F), GPU: ${GPU_NAME:-?}, driver: ${GPU_DRIVER:-?}, runtime: ${GPU_RUNTIME:-?}"
    echo
    echo "| check | target | measured | result |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${ROWS[@]}"
  } >"$TABLE"
  cat "$TABLE"
  if [ -n "${OUT:-}" ]; then cp "$LOG" "$TABLE" "$OUT/" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap finish EXIT

say "build"
B=${METRICS_CHECK_PREBUILT:-${METRICS_CHECK_BUILD_DIR:-build-gpu}}
if [ -z "${METRICS_CHECK_PREBUILT:-}" ]; then
  gpu_deps_setup "$WORK"
  gpu_configure "$B" "$WORK/configure.log" || { tail -20 "$WORK/configure.log"; row build "configures" "cmake failed" FAIL; exit 1; }
  timeout 400 cmake --build "$B" -j "$(nproc)" --target gpuscope gpuscope_inject resnet-train capture_tests ||
    { row build "builds" "build failed" FAIL; exit 1; }
fi
gpu_machine_info
echo "GPU: $GPU_NAME, driver: $GPU_DRIVER, runtime: $GPU_RUNTIME"
GS=$B/bin/gpuscope
R=$B/bin/resnet-train
row build "builds" "ok ($(($(date +%s) - START)) s)" PASS

say "unit tests with a GPU present (metrics, sampler, NVML, PM sampling)"
if timeout 120 "$B/tests/capture_tests" --gtest_brief=1 \
  --gtest_filter='MetricSelection*:Sampler*:SampleRing*:Nvml*:PmSampling*:DeviceSampling*'; then
  row "sampling unit tests (GPU present)" "all pass" "pass" PASS
else
  row "sampling unit tests (GPU present)" "all pass" "failures, see log" FAIL
fi

for PRESET in seed tuned; do
  metrics_preset "$PRESET" 3 "$STEPS"
done
metrics_compare_presets
exit $((FAILED > 0))
