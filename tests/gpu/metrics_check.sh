#!/usr/bin/env bash
# GPU check of the hardware metrics a capture records (PM sampling and NVML),
# in one call on the GPU machine, from the repository root:
#
#   GPU machine: run(command="bash tests/gpu/metrics_check.sh", timeout_s=600)
#
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
# (use that build as is), METRICS_CHECK_STEPS (default 150).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
RES=${METRICS_CHECK_RESULTS:-tests/gpu/results}
mkdir -p "$RES"
LOG="$RES/metrics-$STAMP.log"
TABLE="$RES/metrics-$STAMP.md"
WORK=$(mktemp -d /tmp/gpuscope-metrics-check-XXXXXX)
STEPS=${METRICS_CHECK_STEPS:-150}
exec > >(tee "$LOG") 2>&1

say() { printf '\n==== %s (t=%ss)\n' "$*" "$(($(date +%s) - START))"; }
ROWS=()
FAILED=0
row() {  # check, target, measured, PASS|FAIL|SKIP|INFO
  ROWS+=("| $1 | $2 | $3 | $4 |")
  [ "$4" = FAIL ] && FAILED=$((FAILED + 1))
  echo "RESULT: $1: $3 -> $4"
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
finish() {
  {
    echo "# gpuscope hardware metrics GPU check, $STAMP"
    echo
    echo "- date: $(date -u +%F), GPU: ${GPU:-?}, driver: ${DRIVER:-?}"
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

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: ${GPU:-none}, driver: ${DRIVER:-none}"

say "build"
B=${METRICS_CHECK_PREBUILT:-${METRICS_CHECK_BUILD_DIR:-build-gpu}}
if [ -z "${METRICS_CHECK_PREBUILT:-}" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCOPE_CUDA=ON -DGPUSCOPE_VIEWER=OFF \
    -DGPUSCOPE_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90 || { row build "configures" "cmake failed" FAIL; exit 1; }
  timeout 400 cmake --build "$B" -j "$(nproc)" --target gpuscope gpuscope_inject resnet-train capture_tests ||
    { row build "builds" "build failed" FAIL; exit 1; }
fi
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

# Mean of one series of a trace, over every device, through the SQLite export.
series_stats() {  # trace series -> "mean count"
  local db="$WORK/$(basename "$1").sqlite"
  [ -e "$db" ] || "$GS" export "$1" -o "$db" --format sqlite >/dev/null 2>&1
  python3 - "$db" "$2" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
row = c.execute("SELECT AVG(v.value), COUNT(v.value) FROM GPUSCOPE_COUNTERS v JOIN GPUSCOPE_COUNTER_SERIES s "
                "ON v.seriesId = s.id WHERE s.name = ?", (sys.argv[2],)).fetchone()
print("%.2f %d" % (row[0] or 0.0, row[1] or 0))
EOF
}
property() { "$GS" info "$1" 2>/dev/null | awk -v k="$2" '$1 == k {$1 = ""; sub(/^ +/, ""); print}'; }
stat() { "$GS" info "$1" 2>/dev/null | awk -v k="$2" '$1 == k {print $2}' | tr -d ',' | head -1; }

for PRESET in seed tuned; do
  say "resnet-train --preset $PRESET: plain, capture without metrics, capture with metrics (3 rounds)"
  ARGS=(--preset "$PRESET" --steps "$STEPS" --warmup 20)
  : >"$WORK/$PRESET-plain.txt"
  : >"$WORK/$PRESET-none.txt"
  : >"$WORK/$PRESET-hw.txt"
  for i in 1 2 3; do
    timeout 150 "$R" "${ARGS[@]}" >>"$WORK/$PRESET-plain.txt" 2>&1
    timeout 180 "$GS" capture --gpu-metrics none -o "$WORK/$PRESET-none.gscope" -- "$R" "${ARGS[@]}" \
      >>"$WORK/$PRESET-none.txt" 2>&1
    timeout 180 "$GS" capture -o "$WORK/$PRESET-hw.gscope" -- "$R" "${ARGS[@]}" >>"$WORK/$PRESET-hw.txt" 2>&1
  done
  P=$(grep -o 'step ms=[0-9.]*' "$WORK/$PRESET-plain.txt" | cut -d= -f2 | median)
  N=$(grep -o 'step ms=[0-9.]*' "$WORK/$PRESET-none.txt" | cut -d= -f2 | median)
  H=$(grep -o 'step ms=[0-9.]*' "$WORK/$PRESET-hw.txt" | cut -d= -f2 | median)
  PCT=$(awk -v h="$H" -v n="$N" 'BEGIN {if (n > 0) printf "%.2f", 100 * (h / n - 1); else print "nan"}')
  row "$PRESET: sampling overhead in step time" "<= 1% at 10 kHz" "$PCT% ($H vs $N ms/step; plain $P)" \
    "$(awk -v x="$PCT" 'BEGIN {print (x != "nan" && x <= 1.0) ? "PASS" : "FAIL"}')"

  T="$WORK/$PRESET-hw.gscope"
  [ -e "$T" ] || { row "$PRESET: trace with metrics" "written" "missing" FAIL; continue; }
  GM=$(property "$T" capture.gpu_metrics)
  NV=$(property "$T" capture.nvml)
  echo "capture.gpu_metrics: $GM"
  echo "capture.nvml: $NV"
  echo "capture.gpu_metrics.dropped: $(property "$T" capture.gpu_metrics.dropped)"
  read -r SM SMN <<<"$(series_stats "$T" hw.sm_active)"
  read -r TN TNN <<<"$(series_stats "$T" hw.tensor_active)"
  read -r CLK CLKN <<<"$(series_stats "$T" nvml.sm_clock)"
  LOST_PM=$(stat "$T" capture.samples.pm_sampling.lost)
  LOST_NV=$(stat "$T" capture.samples.nvml.lost)
  if [ "${SMN:-0}" -gt 0 ]; then
    row "$PRESET: PM sampling" "runs" "ran: $GM" PASS
    row "$PRESET: hw.sm_active mean" "seed < tuned" "$SM% over $SMN samples" INFO
    row "$PRESET: hw.tensor_active mean" "measured" "$TN% over $TNN samples" INFO
    row "$PRESET: PM samples lost" "0" "${LOST_PM:-?}" "$([ "${LOST_PM:-1}" = 0 ] && echo PASS || echo FAIL)"
    eval "SM_$PRESET=$SM"
  else
    # A sandboxed GPU: the fallback must be clean and say why.
    row "$PRESET: PM sampling" "runs, or says why not" "did not run: ${GM:-no note}" \
      "$([ -n "$GM" ] && echo INFO || echo FAIL)"
  fi
  if [ "${CLKN:-0}" -gt 0 ]; then
    row "$PRESET: NVML series" "present" "nvml.sm_clock mean $CLK MHz over $CLKN samples; lost ${LOST_NV:-?}" PASS
  else
    row "$PRESET: NVML series" "present" "missing: ${NV:-no note}" FAIL
  fi
done
if [ -n "${SM_seed:-}" ] && [ -n "${SM_tuned:-}" ]; then
  row "SM active, seed against tuned" "seed lower" "$SM_seed% vs $SM_tuned%" \
    "$(awk -v s="$SM_seed" -v t="$SM_tuned" 'BEGIN {print (s < t) ? "PASS" : "FAIL"}')"
fi
exit $((FAILED > 0))
