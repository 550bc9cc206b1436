#!/usr/bin/env bash
# Every GPU check of gpuscope in one call on the GPU machine: one build, then
# the checks in the order of what they prove, each within its own time
# budget, the whole within 8 minutes of wall time (so that a rerun fits in
# the machine's 15 minutes). From the repository root:
#
#   here, once:   bash tests/gpu/capture_deps.sh      (the build's Debian dependencies, as .debs)
#   GPU machine:  run(command="bash tests/gpu/device_run.sh", carry=["build-gpu-deps"], timeout_s=560)
#
#   0. build (viewer, benchmarks and the Python module off; -j = cores):
#      gpuscope, the injection library, capture's test programs, resnet-train,
#      workload_kernel_check; cuDNN/NCCL from the toolkit or Python's
#      site-packages (tests/gpu/lib/common.sh)
#   1. capture correctness: capture_workload through `gpuscope capture`,
#      in-process and with both capture ranges, each trace against what the
#      program did (kernels, copies, memsets, NVTX, syncs, a graph, NCCL);
#      exit status, SIGTERM, CUPTI taken, fork, children, no GPU, --delay/
#      --duration, a PyTorch script (tests/gpu/lib/capture.sh)
#   2. the workload's kernels against their references, --verify per preset
#   3. capture overhead: ns per launch, dropped records at full launch rate,
#      memory bound, resnet-train's step time with and without capture
#   4. captures of --preset seed and --preset tuned judged by their profile's
#      shape (workload_profile_shape.py): workload-{seed,tuned}.gscope
#   5. a PyTorch training program (tests/gpu/torch_compare.py) captured by
#      gpuscope and by torch.profiler: kernels, names, durations, streams,
#      copies per step, and each profiler's overhead on the step time
#   6. hardware metrics: whether PM sampling starts on this runtime, else
#      NVML's series; sampling overhead at 10 kHz (tests/gpu/lib/metrics.sh)
#   7. PyTorch eager / torch.compile baselines: tuned vs eager, tuned vs compile
#   8. single-switch ablations and the what-if table, as time allows
# A section that cannot run (no GPU, a program not built, no PyTorch) or does
# not fit in the time left is reported as SKIPPED with the reason, never
# dropped. Results go to $OUT (the GPU machine's output folder; a new temporary
# folder when unset), at most 8 files: device-<UTC>.md (versions, runtime,
# the tables), device-<UTC>.log (everything), workload-seed.gscope,
# workload-tuned.gscope, torch-gpuscope.gscope, torch-kineto.json.gz. The
# summary is printed last. Commit the first two as
# tests/gpu/results/device-<UTC>.{md,log}. Exit status 0 when every check that
# ran passed, 1 when one failed, 2 for bad usage.
#
# Options:
#   --dry-run         build nothing, run no GPU program: every section reports
#                     why it is skipped (ctest runs this: gpu.device_run_dry)
#   --build-dir DIR   use the build in DIR as it is (no configure, no build)
#   --only N[,N…]     run only these sections (the others: SKIPPED, not selected)
#   --budget S        seconds for the whole run (default 480; DEVICE_RUN_BUDGET_S)
# Environment: DEVICE_RUN_BUILD_S (default 240), the most the build may take;
# DEVICE_RUN_PYTORCH, the baseline command of section 7 (default python3
# tests/gpu/pytorch_baseline.py).
# No `set -u`: one slip in a check must not end the one call there is (the
# ctest dry run runs the script under `bash -u`).
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
source tests/gpu/lib/common.sh
source tests/gpu/lib/capture.sh
source tests/gpu/lib/metrics.sh
source tests/gpu/lib/workload.sh

usage() {
  echo "usage: tests/gpu/device_run.sh [--dry-run] [--build-dir DIR] [--only N[,N…]] [--budget S]"
  sed -n '/^# Options:/,/^# No .set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
DRY=0 PREBUILT="" ONLY="1,2,3,4,5,6,7,8" TOTAL=${DEVICE_RUN_BUDGET_S:-480}
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY=1 ;;
    --build-dir) PREBUILT=${2:-}; shift ;;
    --only) ONLY=${2:-}; shift ;;
    --budget) TOTAL=${2:-}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "device_run.sh: error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ $ONLY =~ ^[1-8](,[1-8])*$ ]] || { echo "device_run.sh: error: --only wants section numbers 1-8, not '$ONLY'" >&2; exit 2; }
[[ $TOTAL =~ ^[0-9]+$ ]] || { echo "device_run.sh: error: --budget wants seconds, not '$TOTAL'" >&2; exit 2; }
if [ -n "$PREBUILT" ] && [ ! -d "$PREBUILT" ]; then
  echo "device_run.sh: error: --build-dir $PREBUILT: no such directory" >&2
  exit 2
fi

START=$(date +%s)
DEADLINE=$((START + TOTAL))
RESERVE=15  # for the results, after the last section
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
if [ -z "${OUT:-}" ]; then
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-device-run-out-XXXXXX")
fi
mkdir -p "$OUT" || exit 2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-device-run-XXXXXX") || exit 2
LOG=$OUT/device-$STAMP.log
MD=$OUT/device-$STAMP.md
exec > >(tee "$LOG") 2>&1
TEE_PID=$!
trap 'rm -rf "$WORK"' EXIT

# ---- time: the run's deadline, the current section's end --------------------------------------
SEC_END=$((DEADLINE - RESERVE))
now() { date +%s; }
left() { echo $((SEC_END - $(now))); }
cap() { local l; l=$(left); ((l < $1)) && echo $((l > 5 ? l : 5)) || echo "$1"; }

# ---- results: rows of checks, per section -------------------------------------------------------
SECTION=0
ROWS=()
FAILS=()
declare -A SEC_STATE=() SEC_NOTE=() SEC_TIME=()
row() {  # CHECK TARGET MEASURED PASS|FAIL|SKIP|INFO
  ROWS+=("| $SECTION | $1 | $2 | $3 | $4 |")
  [ "$4" = FAIL ] && FAILS+=("$SECTION: $1")
  echo "RESULT: $1: $3 -> $4"
}
say() { printf '\n---- %s (%s s into the run, %s s left in the section)\n' "$*" "$(($(now) - START))" "$(left)"; }
section() { say "$@"; }
fail() { row "$1" "passes" "failed (see the log)" FAIL; }
skip() { row "$1" "" "skipped" SKIP; }
enough() { (($(left) >= $1)) && return 0; skip "$2 (out of time: $(left) s left, needs ~$1 s)"; return 1; }
# verdict LINE: PASS when a judge's LINE ends in OK, SKIP when it says "not
# run", else FAIL. row_of_line CHECK TARGET LINE: a row with that result.
verdict() { case $1 in *OK) echo PASS ;; *"not run"*) echo SKIP ;; *) echo FAIL ;; esac; }
row_of_line() { row "$1" "$2" "$3" "$(verdict "$3")"; }

TITLES=("" "capture correctness" "workload kernels and --verify" "capture overhead" "seed and tuned captures"
  "PyTorch: gpuscope against torch.profiler" "hardware metrics" "PyTorch eager / torch.compile baselines"
  "single-switch ablations and what-if")
BUDGETS=(0 70 45 50 50 75 40 80 60)
MINIMA=(0 30 15 20 20 30 20 30 20)

# ---- the machine -------------------------------------------------------------------------------
HAVE_GPU=0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' && HAVE_GPU=1
echo "==== gpuscope device run $STAMP ($([ $DRY = 1 ] && echo 'dry run' || echo 'GPU run'), budget $TOTAL s)"
date -u
uname -a
if command -v nvidia-smi >/dev/null; then nvidia-smi 2>&1 | head -20; else echo "nvidia-smi: not found"; fi
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo "working tree")

# ---- 0. build ------------------------------------------------------------------------------------
B=build-gpu BUILD_NOTE=""
build() {
  say "build"
  if [ -n "$PREBUILT" ]; then
    B=$PREBUILT
    BUILD_NOTE="the build in $B, as it is"
    return
  fi
  if [ $DRY = 1 ]; then
    BUILD_NOTE="none (dry run)"
    return
  fi
  gpu_deps_setup "$WORK"
  SEC_END=$(($(now) + ${DEVICE_RUN_BUILD_S:-240}))
  local t0 targets=() t
  t0=$(now)
  if gpu_configure build-gpu "$WORK/configure.log"; then
    B=build-gpu
    for t in gpuscope gpuscope_inject capture_workload capture_smoke launch_bench capture_verify resnet-train \
      workload_kernel_check; do
      gpu_has_target "$B" "$t" && targets+=("$t")
    done
  else
    tail -20 "$WORK/configure.log"
    echo "the project does not configure: the workload alone (tests/gpu/workload_build; no gpuscope)"
    B=build-gpu-workload
    cmake -S tests/gpu/workload_build -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      "${GPU_CMAKE_HINTS[@]}" >"$WORK/configure.log" 2>&1 || tail -20 "$WORK/configure.log"
    targets=(resnet-train workload_kernel_check)
  fi
  echo "targets: ${targets[*]}"
  # -k 0: a target that fails to build leaves the others (and their sections) standing.
  timeout "$(cap 240)" cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" -- -k 0 >"$WORK/build.log" 2>&1
  local rc=$?
  grep -E "warning|error" "$WORK/build.log" | head -20
  [ $rc = 0 ] || tail -30 "$WORK/build.log"
  BUILD_NOTE="$B: $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") in $(($(now) - t0)) s, -j $(nproc)"
  SEC_END=$((DEADLINE - RESERVE))
}
build
# Where the build leaves each program (the standalone workload build: all in bin/).
bin_path() {  # NAME
  local p
  for p in "$B/bin/$1" "$B/tests/$1" "$B/lib/$1"; do [ -e "$p" ] && { echo "$p"; return; }; done
  echo "$B/bin/$1"
}
GS=$(bin_path gpuscope)
T=$B/tests
R=$(bin_path resnet-train)
rt=$R gs=$GS check=$(bin_path workload_kernel_check)
tmp=$WORK/workload assets=$WORK/assets pytorch_cmd=${DEVICE_RUN_PYTORCH:-python3 tests/gpu/pytorch_baseline.py}
mkdir -p "$tmp" "$assets"
NCCL_FLAG=""
HAVE_TORCH=0
[ $HAVE_GPU = 1 ] && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null &&
  HAVE_TORCH=1
say "versions"
gpu_machine_info
gpu=$GPU_NAME driver=$GPU_DRIVER
echo "GPU: $GPU_NAME x $GPU_COUNT; driver $GPU_DRIVER (CUDA $GPU_DRIVER_CUDA); nvcc $CUDA_VERSION; cuDNN $CUDNN_VERSION;"
echo "NCCL $NCCL_VERSION; PyTorch $TORCH_VERSION; runtime $GPU_RUNTIME; build: $BUILD_NOTE"
workload_init

# blocker N: why section N cannot run here (nothing when it can).
have() { local p; for p in "$@"; do [ -x "$p" ] || [ -f "$p" ] || { echo "$(basename "$p") not built"; return; }; done; }
blocker() {
  if [ $HAVE_GPU = 0 ]; then echo "no GPU: skipped"; return; fi
  if [ $DRY = 1 ]; then echo "dry run: skipped"; return; fi
  case $1 in
    1) have "$GS" "$(bin_path libgpuscope_inject.so)" "$T/capture_workload" "$T/capture_verify" "$T/capture_smoke" \
      "$T/launch_bench" ;;
    2) have "$R" ;;
    3) have "$GS" "$(bin_path libgpuscope_inject.so)" "$T/launch_bench" ;;
    4 | 6) have "$GS" "$R" ;;
    5) have "$GS" "$(bin_path libgpuscope_inject.so)"
      [ $HAVE_TORCH = 1 ] || echo "no PyTorch with CUDA in python3" ;;
    7) have "$R"
      [ $HAVE_TORCH = 1 ] || echo "no PyTorch with CUDA in python3" ;;
    8) have "$R" ;;
  esac | head -1
}

# run_section N FUNCTION: runs it within its budget, or says why not.
run_section() {
  local n=$1 fn=$2 why avail budget t0 nf np ni
  SECTION=$n
  if [[ ",$ONLY," != *",$n,"* ]]; then
    why="not selected (--only $ONLY)"
  else
    why=$(blocker "$n")
  fi
  avail=$((DEADLINE - RESERVE - $(now)))
  if [ -z "$why" ] && ((avail < ${MINIMA[$n]})); then
    why="out of time: $avail s left of the run's $TOTAL s, the section needs ${MINIMA[$n]} s"
  fi
  if [ -n "$why" ]; then
    SEC_STATE[$n]=SKIPPED SEC_NOTE[$n]=$why SEC_TIME[$n]=0
    echo
    echo "==== $n. ${TITLES[$n]}: SKIPPED ($why)"
    return
  fi
  budget=$((avail < ${BUDGETS[$n]} ? avail : ${BUDGETS[$n]}))
  SEC_END=$(($(now) + budget))
  echo
  echo "==== $n. ${TITLES[$n]} (budget $budget s)"
  t0=$(now)
  SEC_NOTE[$n]=""
  $fn
  SEC_TIME[$n]=$(($(now) - t0))
  SEC_END=$((DEADLINE - RESERVE))
  nf=$(printf '%s\n' "${ROWS[@]}" | grep -c "^| $n | .* | FAIL |$")
  np=$(printf '%s\n' "${ROWS[@]}" | grep -c "^| $n | .* | PASS |$")
  ni=$(printf '%s\n' "${ROWS[@]}" | grep -c "^| $n | .* | INFO |$")
  if ((nf > 0)); then SEC_STATE[$n]=FAIL
  elif ((np > 0)); then SEC_STATE[$n]=PASS
  elif ((ni > 0)); then SEC_STATE[$n]=INFO
  else SEC_STATE[$n]=SKIPPED; fi
  [ -n "${SEC_NOTE[$n]}" ] || SEC_NOTE[$n]="$np passed, $nf failed"
  ((SEC_TIME[$n] > budget + 10)) && SEC_NOTE[$n]="${SEC_NOTE[$n]}; ran $((SEC_TIME[$n] - budget)) s over its budget"
}

# ---- the sections -------------------------------------------------------------------------------
sec_capture() {
  capture_known_work
  capture_exit_signals 4
  capture_busy
  capture_processes
  capture_window
  capture_pytorch_script
}

sec_workload() {
  if [ -x "$check" ]; then
    workload_kernels
    row "every kernel against its reference" "0 failed" "$kernels_line" \
      "$(echo "$kernels_line" | grep -q ' 0 failed (exit 0)' && echo PASS || echo FAIL)"
  else
    row "every kernel against its reference" "0 failed" "skipped: workload_kernel_check not built" SKIP
  fi
  workload_verify "--preset seed" "--preset tuned"
  row "--verify, one step per preset" "2 of 2" "$verify_line" \
    "$(echo "$verify_line" | grep -q ': 2 of 2 ' && echo PASS || echo FAIL)"
}

sec_overhead() {
  capture_launch_overhead 3 100000
  capture_full_rate 15 5
  if [ -x "$R" ]; then
    capture_resnet_overhead "$R" 2 100
  else
    row "resnet-train tuned step time overhead" "<= 3%" "skipped: resnet-train not built" SKIP
  fi
  SEC_NOTE[3]="launch +${CAPTURE_LAUNCH_US:-?} us; ${CAPTURE_DROPPED:-?} dropped; step time +${CAPTURE_STEP_PCT:-?}%"
}

sec_captures() {
  WORKLOAD_CAPTURES_BY=tests/gpu/device_run.sh workload_captures 20
  row_of_line "seed capture: padding + broadcast >= 30%, concurrency ~ 0" "OK" "${shape_line[seed]}"
  row_of_line "tuned capture: neither" "OK" "${shape_line[tuned]}"
  row_of_line "seed capture's op table: a row per layer range" "OK" "$ops_line"
  local p size note=""
  for p in seed tuned; do
    [ -s "$assets/workload-$p.gscope" ] || continue
    size=$(stat -c %s "$assets/workload-$p.gscope")
    cp "$assets/workload-$p.gscope" "$OUT/"
    row "workload-$p.gscope size" "<= 2 MB" "$size bytes" "$([ "$size" -le 2000000 ] && echo PASS || echo FAIL)"
    note="$note $p $((size / 1000)) kB"
  done
  SEC_NOTE[4]="seed $(verdict "${shape_line[seed]}"), tuned $(verdict "${shape_line[tuned]}");$note"
}

sec_torch() {
  local py=tests/gpu/torch_compare.py a=(--steps 10 --warmup 5 --batch 128) ms_plain ms_gs ms_k f bytes rc verdict
  say "plain (no profiler)"
  timeout "$(cap 60)" python3 "$py" run --mode plain "${a[@]}" >"$WORK/tc-plain.txt" 2>&1
  cat "$WORK/tc-plain.txt"
  say "under gpuscope capture"
  timeout "$(cap 90)" "$GS" capture -o "$WORK/tc-gpuscope-%p.gscope" -- python3 "$py" run --mode gpuscope "${a[@]}" \
    >"$WORK/tc-gpuscope.txt" 2>&1
  cat "$WORK/tc-gpuscope.txt"
  say "under torch.profiler"
  timeout "$(cap 90)" python3 "$py" run --mode kineto "${a[@]}" --trace "$WORK/tc-kineto.json" >"$WORK/tc-kineto.txt" 2>&1
  cat "$WORK/tc-kineto.txt"
  ms_plain=$(grep -o 'median_ms=[0-9.]*' "$WORK/tc-plain.txt" | cut -d= -f2)
  ms_gs=$(grep -o 'median_ms=[0-9.]*' "$WORK/tc-gpuscope.txt" | cut -d= -f2)
  ms_k=$(grep -o 'median_ms=[0-9.]*' "$WORK/tc-kineto.txt" | cut -d= -f2)
  bytes=$(grep -o 'INPUT bytes=[0-9]*' "$WORK/tc-plain.txt" | cut -d= -f2)
  f=$(capture_first "$WORK/tc-gpuscope-*.gscope")
  if [ -z "$f" ] || [ ! -s "$WORK/tc-kineto.json" ]; then
    row "the program captured both ways" "a gpuscope capture and a Kineto trace" \
      "gpuscope: ${f:-none}; Kineto: $([ -s "$WORK/tc-kineto.json" ] && echo written || echo none)" FAIL
    return
  fi
  say "gpuscope reads both"
  timeout "$(cap 60)" "$GS" export "$f" -o "$WORK/tc-gpuscope.sqlite" 2>&1 | tail -3
  timeout "$(cap 60)" "$GS" export "$WORK/tc-kineto.json" -o "$WORK/tc-kineto.sqlite" 2>&1 | tail -3
  timeout "$(cap 60)" python3 "$py" compare "$WORK/tc-gpuscope.sqlite" "$WORK/tc-kineto.sqlite" --steps 10 \
    --input-bytes "${bytes:-0}" --step-ms "plain=${ms_plain:-},gpuscope=${ms_gs:-},kineto=${ms_k:-}" \
    --md "$WORK/torch-compare.md"
  rc=$?
  verdict=$(grep -o 'RESULT torch-compare: .*' "$WORK/torch-compare.md" 2>/dev/null | cut -d' ' -f3-)
  row "gpuscope's capture against torch.profiler's: kernels, names, streams, copies per step" "equal in every step" \
    "${verdict:-no comparison (exit $rc)}" "$([ $rc = 0 ] && echo PASS || echo FAIL)"
  row "step time: plain, under gpuscope, under torch.profiler" "gpuscope's overhead lower" \
    "${ms_plain:-?} / ${ms_gs:-?} / ${ms_k:-?} ms" \
    "$(awk -v g="${ms_gs:-0}" -v k="${ms_k:-0}" 'BEGIN {print (g > 0 && k > 0) ? (g < k ? "PASS" : "FAIL") : "SKIP"}')"
  cp "$f" "$OUT/torch-gpuscope.gscope"
  gzip -c "$WORK/tc-kineto.json" >"$OUT/torch-kineto.json.gz"
  SEC_NOTE[5]=${verdict:0:70}
}

sec_metrics() {
  row "runtime the machine came up in" "(recorded)" "$GPU_RUNTIME" INFO
  metrics_preset tuned 2 100
  local pm_tuned=${METRICS_PM:-?}
  if [ "$(left)" -gt 25 ]; then metrics_preset seed 1 100; fi
  metrics_compare_presets
  SEC_NOTE[6]="PM sampling ${pm_tuned:0:60}; ${GPU_RUNTIME%% *}"
}

sec_baselines() {
  workload_throughput
  workload_pytorch 100 20 40
  row "resnet-train throughput (img/s per GPU)" "(measured)" "seed ${ips[seed]:-?}, tuned ${ips[tuned]:-?}" INFO
  row "tuned against PyTorch eager (bf16, channels_last)" ">= 1.5x" "$vs_eager (eager ${eager:-n/a} img/s)" \
    "$(ratio_target "$vs_eager" 1.5)"
  row "tuned against torch.compile" ">= 1.0x" "$vs_compile (compile ${compiled:-n/a} img/s)" \
    "$(ratio_target "$vs_compile" 1.0)"
  SEC_NOTE[7]="$vs_eager; $vs_compile"
}
# ratio_target "… N.NNx" T: PASS when N.NN >= T, SKIP for n/a.
ratio_target() {
  echo "$1" | awk -v t="$2" '{x = $NF; sub(/x$/, "", x)} x == "n/a" {print "SKIP"; next} {print (x + 0 >= t) ? "PASS" : "FAIL"}'
}

sec_ablations() {
  [ -n "${step_ms[seed]:-}" ] || workload_run_config "seed" --preset seed
  workload_switches
  if [ -s "$tmp/seed.gscope" ]; then workload_whatif; else skip "what-if (no seed capture: section 4 did not run)"; fi
  row "what-if predictions against the measured switches" "within 10 %" "$whatif_line" INFO
  SEC_NOTE[8]=$whatif_line
}

run_section 1 sec_capture
run_section 2 sec_workload
run_section 3 sec_overhead
run_section 4 sec_captures
run_section 5 sec_torch
run_section 6 sec_metrics
run_section 7 sec_baselines
run_section 8 sec_ablations

# ---- results --------------------------------------------------------------------------------------
SECTION=0
write_md() {
  local n
  echo "# gpuscope on the GPU machine, $STAMP"
  echo
  echo "| | |"
  echo "| --- | --- |"
  echo "| GPU | $GPU_NAME x $GPU_COUNT |"
  echo "| driver | $GPU_DRIVER (CUDA $GPU_DRIVER_CUDA) |"
  echo "| CUDA toolkit (nvcc) | $CUDA_VERSION |"
  echo "| cuDNN | $CUDNN_VERSION |"
  echo "| NCCL | $NCCL_VERSION |"
  echo "| PyTorch | $TORCH_VERSION |"
  echo "| runtime | $GPU_RUNTIME |"
  echo "| commit | $COMMIT |"
  echo "| command | \`bash tests/gpu/device_run.sh$([ $DRY = 1 ] && echo ' --dry-run')\` (budget $TOTAL s, sections $ONLY) |"
  echo "| build | $BUILD_NOTE |"
  echo "| took | $(($(now) - START)) s |"
  echo
  echo "| # | section | result | time | note |"
  echo "| --- | --- | --- | --- | --- |"
  for n in 1 2 3 4 5 6 7 8; do
    echo "| $n | ${TITLES[$n]} | ${SEC_STATE[$n]} | ${SEC_TIME[$n]} s | ${SEC_NOTE[$n]} |"
  done
  echo
  echo "| # | check | target | measured | result |"
  echo "| --- | --- | --- | --- | --- |"
  ((${#ROWS[@]})) && printf '%s\n' "${ROWS[@]}"
  ((${#ROWS[@]})) || echo "| | no check ran | | | |"
  if [ -s "$WORK/torch-compare.md" ]; then
    echo
    echo "## PyTorch: gpuscope capture against torch.profiler (ResNet-18, batch 128, 10 timed steps)"
    echo
    cat "$WORK/torch-compare.md"
  fi
  if [ -s "$tmp/rows.md" ]; then
    echo
    echo "## resnet-train throughput (1 GPU, batch 128, 150 timed steps)"
    echo
    echo "| configuration                | img/s/GPU | ms/step | model TFLOP/s |"
    echo "|------------------------------|-----------|---------|---------------|"
    cat "$tmp/rows.md"
  fi
  if [ -s "$tmp/whatif.md" ]; then
    echo
    echo "| switch               | gpuscope whatif change                   | predicted | measured  | error   | note |"
    echo "|----------------------|------------------------------------------|-----------|-----------|---------|------|"
    cat "$tmp/whatif.md"
  fi
  if [ -s "$assets/workload-captures.md" ]; then
    echo
    sed '1s/^# /## /' "$assets/workload-captures.md"
  fi
}
write_md >"$MD.tmp.$$" && mv "$MD.tmp.$$" "$MD"
NFILES=$(find "$OUT" -type f | wc -l)
summary() {
  local n
  echo
  echo "==== gpuscope device run $STAMP: summary ($(($(now) - START)) s of $TOTAL)"
  echo "GPU $GPU_NAME x $GPU_COUNT, driver $GPU_DRIVER (CUDA $GPU_DRIVER_CUDA), nvcc $CUDA_VERSION"
  echo "cuDNN $CUDNN_VERSION, NCCL $NCCL_VERSION, PyTorch $TORCH_VERSION"
  echo "runtime: $GPU_RUNTIME; build: $BUILD_NOTE"
  for n in 1 2 3 4 5 6 7 8; do
    printf '%d. %-42s %-8s %4s s  %s\n' "$n" "${TITLES[$n]}" "${SEC_STATE[$n]}" "${SEC_TIME[$n]}" "${SEC_NOTE[$n]:0:90}"
  done
  if ((${#FAILS[@]})); then
    echo "failed (${#FAILS[@]}): $(printf '%s; ' "${FAILS[@]}" | cut -c1-400)"
  else
    echo "every check that ran passed"
  fi
  echo "files in $OUT ($NFILES of at most 8): $(cd "$OUT" && find . -type f -printf '%P ' | cut -c1-300)"
  ((NFILES <= 8)) || echo "TOO MANY FILES in $OUT: only 8 come back"
}
summary
# Everything printed has reached the log before the scratch folder goes.
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null
rm -rf "$WORK"
((${#FAILS[@]} == 0 && NFILES <= 8))
