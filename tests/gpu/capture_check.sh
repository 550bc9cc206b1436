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
say() { printf '\n==== %s (t=%ss)\n' "$*" "$(($(date +%s) - START))"; }
ROWS=()
FAILED=0
row() {  # check, target, measured, PASS|FAIL|SKIP|INFO
  ROWS+=("| $1 | $2 | $3 | $4 |")
  [ "$4" = FAIL ] && FAILED=$((FAILED + 1))
  echo "RESULT: $1: $3 -> $4"
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
values() { grep -o "$1=[0-9.]*" "$2" | cut -d= -f2; }  # every value of key=… in a file

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
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
CUDA=$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | cut -d' ' -f2)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo "working tree")
echo "GPU=$GPU DRIVER=$DRIVER CUDA=$CUDA"

# ---- dependencies (carried .debs, unpacked privately; Python's cuDNN/NCCL) -------------------
say "dependencies"
EXTRA=()
if compgen -G "build-gpu-deps/*.deb" >/dev/null; then
  DEPS=$WORK/deps
  mkdir -p "$DEPS"
  for f in build-gpu-deps/*.deb; do dpkg -x "$f" "$DEPS"; done
  [ -e "$DEPS/usr/bin/pkg-config" ] || ln -s pkgconf "$DEPS/usr/bin/pkg-config"
  # zlib1g-dev's libz.so names Debian's exact libz file; point it at this machine's.
  ZSO="$DEPS/usr/lib/x86_64-linux-gnu/libz.so"
  if [ -L "$ZSO" ] && [ ! -e "$ZSO" ]; then
    SYSZ=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
    [ -n "$SYSZ" ] && ln -sf "$SYSZ" "$ZSO" && echo "libz.so -> $SYSZ"
  fi
  export PATH="$DEPS/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_LIBDIR="$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$DEPS"
  export CMAKE_PREFIX_PATH="$DEPS/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  echo "unpacked $(ls build-gpu-deps/*.deb | wc -l) packages into $DEPS"
else
  echo "no build-gpu-deps/: using what is installed (run tests/gpu/capture_deps.sh here and carry it if the build fails)"
fi
# cuDNN and NCCL: the toolkit's, else the ones in Python's site-packages.
NV=$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
for lib in nccl cudnn; do
  upper=$(echo $lib | tr a-z A-Z)
  if ls /usr/local/cuda/lib64/lib$lib.so* >/dev/null 2>&1; then continue; fi
  so=$(find "${NV:-/nonexistent}" -name "lib$lib.so*" 2>/dev/null | sort | head -1)
  inc=$(dirname "$(find "${NV:-/nonexistent}" -name "$lib.h" 2>/dev/null | head -1)" 2>/dev/null)
  if [ -n "$so" ] && [ -n "$inc" ]; then
    EXTRA+=("-DGPUSCOPE_${upper}_LIB=$so" "-DGPUSCOPE_${upper}_INCLUDE=$inc")
    export LD_LIBRARY_PATH="$(dirname "$so")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "$lib: $so"
  else
    echo "$lib: not found"
  fi
done
# CUPTI: the toolkit's; Python's as a fallback for running.
CUPTI_SO=$(ls /usr/local/cuda/lib64/libcupti.so.13* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13* 2>/dev/null | head -1)
CUPTI=$(basename "${CUPTI_SO:-none}")
echo "CUPTI: ${CUPTI_SO:-not in the toolkit}"

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
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCOPE_CUDA=ON -DGPUSCOPE_VIEWER=OFF \
    -DGPUSCOPE_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90 "${EXTRA[@]}" || { row build "configures" "cmake failed" FAIL; exit 1; }
  timeout 400 cmake --build $B -j "$JOBS" --target "${TARGETS[@]}" || { row build "builds" "build failed" FAIL; exit 1; }
  if [ "${CAPTURE_CHECK_SKIP_RESNET:-0}" != 1 ] && cmake --build $B --target help 2>/dev/null | grep -q '^resnet-train:'; then
    timeout $(( $(left) > 300 ? 240 : 60 )) cmake --build $B -j "$JOBS" --target resnet-train && HAVE_RESNET=1
  fi
fi
row build "builds" "ok ($(($(date +%s) - START)) s)" PASS
GS=$B/bin/gpuscope
T=$B/tests
NCCL_FLAG=""  # set below if capture_workload was built without NCCL

# ---- 1. unit tests with a GPU present -------------------------------------------------------
say "unit tests"
if timeout 180 $T/capture_tests --gtest_brief=1; then row "capture_tests (GPU present)" "all pass" "pass" PASS
else row "capture_tests (GPU present)" "all pass" "failures, see log" FAIL; fi

# ---- 2. traces of known work ----------------------------------------------------------------
verify() {  # name, file, capture_verify args...
  local name=$1 file=$2
  shift 2
  if [ ! -s "$file" ]; then row "$name" "trace matches the program" "no trace file" FAIL; return; fi
  if timeout 60 $T/capture_verify "$@" $NCCL_FLAG "$file" >"$WORK/verify.txt" 2>&1; then
    row "$name" "trace matches the program" "$(grep -c '^PASS' "$WORK/verify.txt") checks pass" PASS
  else
    row "$name" "trace matches the program" "$(grep '^FAIL' "$WORK/verify.txt" | cut -c6- | tr '\n' ';' | cut -c1-300)" FAIL
  fi
  cat "$WORK/verify.txt"
}
say "capture_workload under gpuscope capture"
timeout 180 $GS capture -o "$WORK/full-%p.gscope" -- $T/capture_workload | tee "$WORK/full.txt"
echo "exit status ${PIPESTATUS[0]}"
grep -q 'nccl phase skipped' "$WORK/full.txt" && NCCL_FLAG="--no-nccl"
verify "gpuscope capture -- capture_workload" "$(ls $WORK/full-*.gscope 2>/dev/null | head -1)" --expect full
F=$(ls $WORK/full-*.gscope 2>/dev/null | head -1)
[ -n "$F" ] && { $GS info "$F" 2>&1 | head -60 || true; }

say "capture_workload capturing itself (in-process API)"
timeout 180 $T/capture_workload --in-process "$WORK/inproc.gscope"
echo "exit status $?"
verify "in-process capture of capture_workload" "$WORK/inproc.gscope" --expect full

say "capture ranges"
timeout 180 $GS capture --capture-range nvtx:graph -o "$WORK/rgraph-%p.gscope" -- $T/capture_workload
verify "--capture-range nvtx:graph" "$(ls $WORK/rgraph-*.gscope 2>/dev/null | head -1)" --expect range-graph
timeout 180 $GS capture --capture-range cuda-profiler-api -o "$WORK/rcopies-%p.gscope" -- $T/capture_workload
verify "--capture-range cuda-profiler-api" "$(ls $WORK/rcopies-*.gscope 2>/dev/null | head -1)" --expect range-copies

say "exit status and signals"
timeout 60 $GS capture -o "$WORK/st-%p.gscope" -- /bin/sh -c "$T/capture_workload >/dev/null; exit 5"
st=$?
row "exit status passes through" "5" "$st" "$([ $st = 5 ] && echo PASS || echo FAIL)"
CF=$(ls $WORK/st-*.gscope 2>/dev/null | head -1)
row "a child process writes its own file" "sh -> capture_workload: 1 file" "${CF:+$(basename "$CF")}${CF:-none}" \
  "$([ -n "$CF" ] && $T/capture_verify $NCCL_FLAG "$CF" >/dev/null 2>&1 && echo PASS || echo FAIL)"
$GS capture -o "$WORK/killed-%p.gscope" -- $T/launch_bench --seconds 30 &
gp=$!
sleep 8
kill -TERM $gp
wait $gp
st=$?
KF=$(ls $WORK/killed-*.gscope 2>/dev/null | head -1)
kinfo=$([ -n "$KF" ] && $T/capture_verify --expect range-copies "$KF" 2>&1 | grep 'file complete' || echo "no file")
row "SIGTERM mid-run: file finished" "status 143, complete file" "status $st; ${kinfo:-?}" \
  "$([ $st = 143 ] && echo "$kinfo" | grep -q '^PASS' && echo PASS || echo FAIL)"

# ---- 2b. processes, refusals, timing ----------------------------------------------------------
say "CUPTI already taken: the program's own start() and the injected library in one process"
# Whichever subscribes first wins; the other must say so and the program run on.
timeout 180 $GS capture -o "$WORK/outer-%p.gscope" -- $T/capture_workload --in-process "$WORK/inner.gscope" \
  >"$WORK/busy.txt" 2>&1
st=$?
cat "$WORK/busy.txt"
busy=$(grep -c 'already in use by another profiler' "$WORK/busy.txt")
OF=$(ls $WORK/outer-*.gscope 2>/dev/null | head -1)
[ -e "$WORK/inner.gscope" ] && WON="$WORK/inner.gscope" || WON="$OF"
nfiles=$(( $([ -e "$WORK/inner.gscope" ] && echo 1 || echo 0) + $([ -n "$OF" ] && echo 1 || echo 0) ))
row "CUPTI busy (MULTIPLE_SUBSCRIBERS): program unharmed, said clearly" "status 0, message, exactly 1 of 2 files" \
  "status $st; message lines $busy; $nfiles file(s)" \
  "$([ $st = 0 ] && [ "$busy" -ge 1 ] && [ $nfiles = 1 ] && echo PASS || echo FAIL)"
verify "the capture that won CUPTI" "$WON" --expect full

say "fork without exec"
timeout 180 $GS capture -o "$WORK/fork-%p.gscope" -- $T/capture_workload --fork >"$WORK/fork.txt" 2>&1
st=$?
cat "$WORK/fork.txt"
nf=$(ls $WORK/fork-*.gscope 2>/dev/null | wc -l)
row "fork without exec: the child is inert" "status 0, 1 file (the parent's)" "status $st; $nf file(s)" \
  "$([ $st = 0 ] && [ "$nf" = 1 ] && echo PASS || echo FAIL)"
verify "capture of a program that forked" "$(ls $WORK/fork-*.gscope 2>/dev/null | head -1)" --expect full

say "two CUDA children, output pattern %r %h %n"
HOST=$(hostname)
RANK=3 timeout 120 $GS capture -o "$WORK/kids-r%r-%h-%n.gscope" -- /bin/sh -c "$T/capture_smoke & $T/capture_smoke; wait" \
  >"$WORK/kids.txt" 2>&1
st=$?
cat "$WORK/kids.txt"
k1="$WORK/kids-r3-$HOST-1.gscope"
k2="$WORK/kids-r3-$HOST-2.gscope"
kok=0
for f in "$k1" "$k2"; do [ -s "$f" ] && $GS info "$f" >/dev/null 2>&1 && kok=$((kok + 1)); done
k8=$(grep -c 'kernels 8,' "$WORK/kids.txt")
row "each CUDA child writes its own file (%r %h %n)" "2 readable files, 8 kernels each" \
  "status $st; $kok readable of kids-r3-$HOST-{1,2}.gscope; $k8 summaries with 8 kernels" \
  "$([ $st = 0 ] && [ $kok = 2 ] && [ "$k8" = 2 ] && echo PASS || echo FAIL)"

say "no visible GPU (CUDA_VISIBLE_DEVICES=\"\")"
CUDA_VISIBLE_DEVICES="" timeout 60 $GS capture -o "$WORK/nodev-%p.gscope" -- $T/capture_smoke >"$WORK/nodev.txt" 2>&1
st=$?
cat "$WORK/nodev.txt"
said=$(grep -cE 'no CUDA device|nothing (was )?captured' "$WORK/nodev.txt")
row "no visible GPU: program unharmed, said clearly" "status 7 (the program's), message" "status $st; message lines $said" \
  "$([ $st = 7 ] && [ "$said" -ge 1 ] && echo PASS || echo FAIL)"

say "--delay 2 --duration 3 on an 8 s launch loop"
timeout 60 $GS capture --delay 2 --duration 3 -o "$WORK/timed-%p.gscope" -- $T/launch_bench --seconds 8 \
  >"$WORK/timed.txt" 2>"$WORK/timed.err"
cat "$WORK/timed.txt" "$WORK/timed.err"
TL=$(grep -o 'launches=[0-9]*' "$WORK/timed.txt" | cut -d= -f2)
TK=$(grep -o 'kernels [0-9,]*' "$WORK/timed.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
FR=$(awk -v k="${TK:-0}" -v l="${TL:-0}" 'BEGIN {if (l > 0) printf "%.2f", k / (l + 2000); else print "nan"}')
row "--delay/--duration record only their window" "about 3/8 of the kernels (0.20-0.55)" "${TK:-?} of $((${TL:-0} + 2000)) kernels ($FR)" \
  "$(awk -v f="$FR" 'BEGIN {print (f >= 0.20 && f <= 0.55) ? "PASS" : "FAIL"}')"

say "a PyTorch script (python3 under gpuscope capture)"
PY='import torch
x = torch.randn(1024, 1024, device="cuda")
for _ in range(20): x = torch.tanh(x @ x)
torch.cuda.synchronize()
print("torch ok", torch.__version__, torch.version.cuda)'
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  timeout 180 $GS capture -o "$WORK/torch-%p.gscope" -- python3 -c "$PY" >"$WORK/torch.txt" 2>&1
  st=$?
  cat "$WORK/torch.txt"
  TK=$(grep -o 'kernels [0-9,]*' "$WORK/torch.txt" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  TF=$(ls $WORK/torch-*.gscope 2>/dev/null | head -1)
  row "PyTorch script under gpuscope capture" "status 0, >= 40 kernels, readable file" "status $st; ${TK:-0} kernels" \
    "$([ $st = 0 ] && [ "${TK:-0}" -ge 40 ] && [ -n "$TF" ] && $GS info "$TF" >/dev/null 2>&1 && echo PASS || echo FAIL)"
else
  row "PyTorch script under gpuscope capture" "status 0, >= 40 kernels" "skipped: no PyTorch with CUDA here" SKIP
fi

# ---- 3. overhead ----------------------------------------------------------------------------
say "launch overhead (launch_bench 200000, 5 interleaved pairs)"
: >"$WORK/plain.txt"
: >"$WORK/cap.txt"
for i in 1 2 3 4 5; do
  for mode in plain cap; do
    [ $((i % 2)) = 0 ] && mode=$([ $mode = plain ] && echo cap || echo plain)  # alternate the order
    if [ $mode = plain ]; then
      timeout 120 $T/launch_bench 200000 | tee -a "$WORK/plain.txt"
    else
      timeout 180 $GS capture -o "$WORK/lb.gscope" -- $T/launch_bench 200000 2>"$WORK/lb.err" | tee -a "$WORK/cap.txt"
      cat "$WORK/lb.err"
      rm -f "$WORK/lb.gscope"
    fi
  done
done
P=$(values us_per_launch "$WORK/plain.txt" | median)
C=$(values us_per_launch "$WORK/cap.txt" | median)
PE=$(values us_per_kernel_end_to_end "$WORK/plain.txt" | median)
CE=$(values us_per_kernel_end_to_end "$WORK/cap.txt" | median)
D=$(awk -v c="$C" -v p="$P" 'BEGIN {printf "%.3f", c - p}')
DE=$(awk -v c="$CE" -v p="$PE" 'BEGIN {printf "%.3f", c - p}')
row "launch overhead (host, per launch)" "<= 1 us" "$D us (median $C vs $P us)" "$(awk -v d="$D" 'BEGIN {print (d <= 1.0) ? "PASS" : "FAIL"}')"
row "launch overhead (end to end, per kernel)" "(reported)" "$DE us (median $CE vs $PE us)" INFO
grep -h 'kernels [0-9,]*' "$WORK/lb.err" | tail -1

if [ "$(left)" -gt 120 ]; then
  say "60 s at full launch rate"
  timeout 150 $GS capture -o "$WORK/long-%p.gscope" -- $T/launch_bench --seconds 60 >"$WORK/long.txt" 2>"$WORK/long.err"
  cat "$WORK/long.txt" "$WORK/long.err"
  L=$(grep -o 'launches=[0-9]*' "$WORK/long.txt" | cut -d= -f2)
  HW60=$(grep -o 'vmhwm_kb=[0-9]*' "$WORK/long.txt" | cut -d= -f2)
  DROP=$(grep -o 'dropped records [0-9,]*' "$WORK/long.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  KER=$(grep -o 'kernels [0-9,]*' "$WORK/long.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  POOL=$(grep -o 'buffer memory peak [0-9.]* [KMG]iB' "$WORK/long.err" | head -1)
  row "60 s at full launch rate: dropped records" "0" "${DROP:-?} dropped; ${KER:-?} kernels kept of $((${L:-0} + 2000)) launched" \
    "$([ "${DROP:-x}" = 0 ] && [ "${KER:-0}" = $((${L:-0} + 2000)) ] && echo PASS || echo FAIL)"
  rm -f "$WORK"/long-*.gscope
  timeout 60 $GS capture -o "$WORK/short-%p.gscope" -- $T/launch_bench --seconds 15 >"$WORK/short.txt" 2>"$WORK/short.err"
  HW15=$(grep -o 'vmhwm_kb=[0-9]*' "$WORK/short.txt" | cut -d= -f2)
  rm -f "$WORK"/short-*.gscope
  row "memory bounded by the pool (peak RSS 60 s vs 15 s)" "no growth with run length" \
    "$((${HW60:-0} / 1024)) MiB vs $((${HW15:-0} / 1024)) MiB; $POOL" \
    "$(awk -v a="${HW60:-}" -v b="${HW15:-}" 'BEGIN {print (a != "" && b != "" && a - b < 65536) ? "PASS" : "FAIL"}')"
else
  row "60 s at full launch rate" "0 dropped" "skipped: out of time" SKIP
fi

if [ $HAVE_RESNET = 1 ] && [ "$(left)" -gt 150 ]; then
  say "resnet-train --preset tuned (3 interleaved pairs)"
  R=$B/bin/resnet-train
  ARGS=(--preset tuned --steps 200 --warmup 20)
  : >"$WORK/r-plain.txt"
  : >"$WORK/r-cap.txt"
  for i in 1 2 3; do
    timeout 120 $R "${ARGS[@]}" | tee -a "$WORK/r-plain.txt" | grep summary
    timeout 150 $GS capture -o "$WORK/resnet.gscope" -- $R "${ARGS[@]}" 2>"$WORK/r.err" | tee -a "$WORK/r-cap.txt" | grep summary
    cat "$WORK/r.err"
    [ "$(left)" -gt 60 ] || break
  done
  RP=$(grep -o 'step ms=[0-9.]*' "$WORK/r-plain.txt" | cut -d= -f2 | median)
  RC=$(grep -o 'step ms=[0-9.]*' "$WORK/r-cap.txt" | cut -d= -f2 | median)
  PCT=$(awk -v c="$RC" -v p="$RP" 'BEGIN {printf "%.2f", 100 * (c / p - 1)}')
  row "resnet-train tuned step time overhead" "<= 3%" "$PCT% ($RC vs $RP ms/step)" \
    "$(awk -v x="$PCT" 'BEGIN {print (x <= 3.0) ? "PASS" : "FAIL"}')"
  grep -h 'dropped records' "$WORK/r.err" | tail -1
else
  row "resnet-train tuned step time overhead" "<= 3%" "skipped ($([ $HAVE_RESNET = 1 ] && echo 'out of time' || echo 'resnet-train not built'))" SKIP
fi

say "done"
exit $((FAILED > 0))
