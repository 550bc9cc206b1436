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
  # gpuscope's Debian build dependencies, carried as .debs (tests/gpu/capture_deps.sh)
  # and unpacked into a private prefix: nothing is installed.
  if compgen -G "build-gpu-deps/*.deb" > /dev/null; then
    mkdir -p "$tmp/deps"
    deps=$(cd "$tmp/deps" && pwd)
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
    echo "unpacked $(ls build-gpu-deps/*.deb | wc -l) .debs into $deps"
  else
    echo "no build-gpu-deps/: using what is installed"
  fi
  # cuDNN / NCCL: the toolkit's, else the pip wheels PyTorch brought.
  hints=()
  nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
  for pkg in cudnn nccl; do
    upper=$(echo "$pkg" | tr a-z A-Z)
    if ls /usr/local/cuda/lib64/lib$pkg.so* > /dev/null 2>&1 && [ -e /usr/local/cuda/include/$pkg.h ]; then
      echo "$pkg: the toolkit's"
      continue
    fi
    so=$(find "${nv:-/nonexistent}" -name "lib$pkg.so*" 2>/dev/null | sort | head -1)
    inc=$(find "${nv:-/nonexistent}" -name "$pkg.h" 2>/dev/null | head -1)
    if [ -n "$so" ] && [ -n "$inc" ]; then
      hints+=("-DGPUSCOPE_${upper}_LIB=$so" "-DGPUSCOPE_${upper}_INCLUDE=$(dirname "$inc")")
      LD_LIBRARY_PATH="$(dirname "$so")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      export LD_LIBRARY_PATH
      echo "$pkg: $so (Python site-packages)"
    else
      echo "$pkg: not found in the toolkit or in Python's site-packages"
    fi
  done
  bin=build-gpu/bin
  check=build-gpu/tests/workload_kernel_check
  if ! cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCOPE_VIEWER=OFF -DGPUSCOPE_BUILD_BENCH=OFF \
       -DGPUSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${hints[@]}" > "$tmp/configure.log" 2>&1; then
    tail -5 "$tmp/configure.log"
    echo "full configure failed; building the workload alone (tests/gpu/workload_build; no gpuscope, no captures)"
    notes+=("standalone build: the project did not configure (carry build-gpu-deps from tests/gpu/capture_deps.sh)")
    full_build=0
    cmake -S tests/gpu/workload_build -B build-gpu-workload -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 "${hints[@]}" > "$tmp/configure.log" 2>&1 || { tail -20 "$tmp/configure.log"; fail "configure"; }
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

# ---- 2. kernels vs references --------------------------------------------------------
section "kernels vs references"
kernels_line="kernel checks: not run"
if enough 30 "kernel check"; then
  timeout "$(cap 150)" "$check" > "$tmp/kernels.log" 2>&1
  rc=$?
  head -1 "$tmp/kernels.log"
  grep -E "^FAIL" "$tmp/kernels.log" | head -20
  kernels_line="kernel checks: $(grep -c '^ok' "$tmp/kernels.log") ok, $(grep -c '^FAIL' "$tmp/kernels.log") failed (exit $rc)"
  echo "$kernels_line"
  [ $rc -eq 0 ] || fail "workload_kernel_check (exit $rc)"
fi

# ---- 3. whole step vs the CPU reference -------------------------------------------------
section "--verify: one step against the CPU reference"
verify_configs=(
  "--preset seed"
  "--preset tuned"
  "--preset tuned --precision fp32"
  "--preset tuned --precision tf32 --graphs off"
  "--preset seed --bn transpose"
  "--preset seed --bn fused --bias fused --layout nhwc --data synthetic"
  "--preset seed --padding fused --update overlap --allreduce bucketed"
  "--preset tuned --layout nchw --bias broadcast --bn naive --data host"
)
verify_ok=0
for cfg in "${verify_configs[@]}"; do
  enough 20 "verify $cfg" || continue
  out=$(timeout "$(cap 90)" "$rt" --verify --batch 8 $cfg 2>&1)
  rc=$?
  echo "[$cfg]"
  echo "$out" | grep -E "^(loss|verify)|exceeds|error"
  if [ $rc -eq 0 ] && echo "$out" | grep -q "^verify: PASS"; then verify_ok=$((verify_ok + 1)); else fail "verify $cfg (exit $rc)"; fi
done
verify_line="--verify: $verify_ok of ${#verify_configs[@]} configurations match the CPU reference"

# ---- 4. presets train ------------------------------------------------------------------------
section "presets train, loss falls"
declare -A train_line
for preset in seed tuned; do
  train_line[$preset]="not run"
  enough 40 "training $preset" || continue
  timeout "$(cap 120)" "$rt" --preset "$preset" --steps 300 --warmup 10 --log-every 100 > "$tmp/train-$preset.log" 2>&1
  rc=$?
  grep -E "^(step|summary|memory|ranks|input|cuda graph)" "$tmp/train-$preset.log"
  loss=$(grep -o "loss [0-9.]* -> [0-9.]*" "$tmp/train-$preset.log" | tail -1)
  first=$(echo "$loss" | awk '{print $2}')
  last=$(echo "$loss" | awk '{print $4}')
  train_line[$preset]="${loss:-no summary} (exit $rc)"
  if [ $rc -ne 0 ] || [ -z "$loss" ] || ! awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.7 * a) }'; then
    tail -3 "$tmp/train-$preset.log"
    fail "preset $preset trains (exit $rc, $loss)"
  fi
done

# ---- 5. throughput -------------------------------------------------------------------------------
section "throughput (1 GPU, batch 128)"
declare -A ips step_ms
: > "$tmp/rows.md"
run_config() {  # NAME FLAGS…
  local name=$1
  shift
  ips[$name]=0
  enough 25 "throughput $name" || return
  local out
  out=$(timeout "$(cap 90)" "$rt" --gpus 1 --steps 150 --warmup 20 --log-every 150 "$@" 2>&1)
  local s
  s=$(echo "$out" | grep "^summary:")
  if [ -z "$s" ]; then
    echo "$out" | tail -3
    fail "throughput run $name"
    return
  fi
  echo "$s"
  ips[$name]=$(echo "$s" | grep -o "img/s per GPU=[0-9]*" | cut -d= -f2)
  local ms tf
  ms=$(echo "$s" | grep -o "step ms=[0-9.]*" | cut -d= -f2)
  step_ms[$name]=$ms
  tf=$(echo "$s" | grep -o "TFLOP/s per GPU=[0-9.]*" | cut -d= -f2)
  printf '| %-28s | %9s | %8s | %7s |\n' "$name" "${ips[$name]}" "$ms" "$tf" >> "$tmp/rows.md"
  [ "$name" = "tuned" ] && echo "$out" | grep "^memory:" > "$tmp/tuned-memory.txt"
}
run_config "seed" --preset seed
run_config "tuned" --preset tuned

# ---- 6. PyTorch on the same GPU -------------------------------------------------------------------
section "PyTorch baseline"
eager="" compiled=""
if enough 60 "PyTorch baseline"; then
  timeout "$(cap 240)" $pytorch_cmd --steps 150 --warmup 30 > "$tmp/pytorch.log" 2>&1 || fail "pytorch baseline (exit $?)"
  grep -vE "^\s*$" "$tmp/pytorch.log" | tail -5
  # The same network: resnet-train's exact parameter count (reference_net_test.cpp).
  torch_params=$(grep -o "NETWORK parameters=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
  [ "${torch_params:-0}" = 701466 ] || fail "pytorch baseline has ${torch_params:-?} parameters, resnet-train 701466"
  eager=$(grep -o "RESULT eager img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
  compiled=$(grep -o "RESULT compile img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
tuned=${ips[tuned]:-0}
vs_eager="tuned vs eager: $(ratio "$tuned" "${eager:-0}")"
vs_compile="tuned vs compile: $(ratio "$tuned" "${compiled:-0}")"
echo "$vs_eager"
echo "$vs_compile"

# ---- 7. captures ----------------------------------------------------------------------------------------
section "captures of --preset seed and --preset tuned"
capture() {  # PRESET FILE
  rm -f "$2"
  if timeout "$(cap 90)" "$rt" --gpus 1 --preset "$1" --steps 20 --warmup 5 --log-every 20 --profile "$2" \
       > "$tmp/capture-$1.log" 2>&1; then
    return 0
  fi
  # Built without the capture library: the CLI's injection path.
  [ -x "$gs" ] && timeout "$(cap 90)" "$gs" capture -o "$2" -- "$rt" --gpus 1 --preset "$1" --steps 20 --warmup 5 \
       --log-every 20 >> "$tmp/capture-$1.log" 2>&1
}
declare -A shape_line
ops_line="capture ops (seed): not run"
for preset in seed tuned; do
  shape_line[$preset]="capture report ($preset): not run"
  enough 40 "capture of $preset" || continue
  file=$tmp/$preset.gscope
  if capture "$preset" "$file" && [ -s "$file" ]; then
    grep -E "^profile|error" "$tmp/capture-$preset.log"
    if [ -x "$gs" ] && "$gs" report --json -o "$tmp/$preset-report.json" "$file" 2> "$tmp/report-$preset.err"; then
      shape_line[$preset]=$(python3 tests/gpu/workload_profile_shape.py report "$preset" "$tmp/$preset-report.json")
      "$gs" report "$file" 2>&1 | head -40
      if [ "$preset" = seed ]; then
        ops_line=$(python3 tests/gpu/workload_profile_shape.py ops seed "$tmp/seed-report.json")
        echo "$ops_line"
        echo "$ops_line" | grep -q "OK$" || fail "seed capture's op table (layer ranges)"
      fi
    elif [ -x "$gs" ] && "$gs" export --format chrome -o "$tmp/$preset.json" "$file" 2>> "$tmp/report-$preset.err"; then
      shape_line[$preset]=$(python3 tests/gpu/workload_profile_shape.py chrome "$preset" "$tmp/$preset.json")
    else
      shape_line[$preset]="capture report ($preset): neither gpuscope report nor export worked: $(head -1 "$tmp/report-$preset.err" 2>/dev/null)"
    fi
    echo "${shape_line[$preset]}"
    echo "${shape_line[$preset]}" | grep -q "OK$" || fail "$preset capture shape"
  else
    tail -3 "$tmp/capture-$preset.log" 2>/dev/null
    shape_line[$preset]="capture report ($preset): capture failed"
    fail "capture of --preset $preset"
  fi
done
mkdir -p "$assets"
for p in seed tuned; do
  if [ -s "$tmp/$p.gscope" ]; then
    cp "$tmp/$p.gscope" "$assets/workload-$p.gscope"
    echo "$assets/workload-$p.gscope: $(stat -c %s "$assets/workload-$p.gscope") bytes"
  fi
done
if ls "$assets"/workload-*.gscope > /dev/null 2>&1; then
  cat > "$assets/workload-captures.md" << EOT
# assets/workload-seed.gscope, assets/workload-tuned.gscope

Real captures of the bundled workload, made by tests/gpu/workload_check.sh on
$(date -u +%F): \`resnet-train --gpus 1 --preset seed|tuned --steps 20 --warmup 5 --profile FILE\`
(the 20 timed steps only), one ${gpu:-GPU}, driver ${driver:-unknown}, batch 128.
EOT
fi

# ---- 8. gradients across ranks ----------------------------------------------------------------------
section "gradients bit-identical across ranks (--check-sync)"
sync_line="gradients across ranks: not run"
sync_run() {  # LABEL COMMAND…: passes when the run says "bit-identical ... yes"
  local label=$1
  shift
  local out rc
  out=$(timeout "$(cap 90)" "$@" 2>&1)
  rc=$?
  echo "$out" | grep -E "^(gradients|ranks|summary)|error"
  if [ $rc -eq 0 ] && echo "$out" | grep -q "^gradients bit-identical across .* after every step: yes"; then
    return 0
  fi
  fail "$label (exit $rc)"
  return 1
}
if enough 30 "rank sync"; then
  if [ "${ngpus:-0}" -ge 2 ]; then
    ok=0
    for preset in seed tuned; do
      sync_run "check-sync $preset --gpus 2" "$rt" --preset "$preset" --gpus 2 --steps 30 --warmup 2 --log-every 30 \
        --check-sync && ok=$((ok + 1))
    done
    sync_line="gradients across 2 ranks (threads): bit-identical after every step in $ok of 2 presets"
  else
    sync_run "check-sync tuned --gpus 1" "$rt" --preset tuned --gpus 1 --steps 10 --warmup 2 --log-every 10 --check-sync
    sync_line="gradients across ranks: NOT CHECKED, one GPU (NCCL refuses two ranks on one device); the one-rank --check-sync path ran"
  fi
  if command -v mpirun > /dev/null 2>&1 && ldd "$rt" 2>/dev/null | grep -q libmpi; then
    np=$([ "${ngpus:-0}" -ge 2 ] && echo 2 || echo 1)
    sync_run "mpirun -np $np" mpirun --allow-run-as-root -np "$np" "$rt" --preset tuned --steps 10 --warmup 2 \
      --log-every 10 --check-sync && sync_line="$sync_line; mpirun -np $np: ok"
  else
    sync_line="$sync_line; mpirun: not run (no mpirun, or resnet-train built without MPI)"
  fi
fi
echo "$sync_line"

# ---- 9. single switches flipped from seed -------------------------------------------------------------
section "throughput: single switches flipped from seed"
for flip in "--layout nhwc" "--padding fused" "--bias fused" "--bn transpose" "--bn fused" "--update overlap" \
            "--allreduce bucketed" "--data synthetic" "--precision tf32" "--precision bf16" "--graphs on"; do
  run_config "seed $flip" --preset seed $flip
done

# ---- 10. what-if predictions against the single switches ---------------------------------------
section "what-if: predictions from the seed capture against the single switches"
# Each switch and the whatif change that models it (docs/whatif.md). The
# prediction is a speedup of the captured seed steps; the measurement, the
# throughput runs' ms/step of seed over the switch's (no capture running).
declare -A whatif_of=(
  ["--padding fused"]="--remove padding"
  ["--bias fused"]="--remove broadcast"
  ["--bn fused"]="--scale normalization=0.5"
  ["--update overlap"]="--overlap-update"
  ["--allreduce bucketed"]="--overlap-allreduce"
  ["--data synthetic"]="--no-input-wait"
  ["--graphs on"]="--cuda-graphs"
  ["--precision tf32"]="--scale convolution=0.5 --scale gemm=0.5"
)
: > "$tmp/whatif.md"
whatif_line="what-if against the switches: not run"
if [ -x "$gs" ] && [ -s "$tmp/seed.gscope" ] && [ -n "${step_ms[seed]:-}" ]; then
  n=0
  within=0
  for flip in "--padding fused" "--bias fused" "--bn fused" "--update overlap" "--allreduce bucketed" \
              "--data synthetic" "--graphs on" "--precision tf32"; do
    measured=${step_ms["seed $flip"]:-}
    if [ -z "$measured" ]; then
      echo "$flip: no measured step time (section 9 did not run it)"
      continue
    fi
    enough 10 "whatif $flip" || break
    # shellcheck disable=SC2086  # the change is several words on purpose
    if ! timeout "$(cap 60)" "$gs" whatif --json "$tmp/seed.gscope" ${whatif_of[$flip]} > "$tmp/whatif.json" \
         2> "$tmp/whatif.err"; then
      echo "$flip: gpuscope whatif ${whatif_of[$flip]} failed: $(head -1 "$tmp/whatif.err")"
      printf '| %-20s | %-40s | %9s | %9s | %7s | %s |\n' "$flip" "${whatif_of[$flip]}" "-" "-" "-" \
        "whatif failed: $(head -1 "$tmp/whatif.err")" >> "$tmp/whatif.md"
      continue
    fi
    row=$(python3 - "$tmp/whatif.json" "${step_ms[seed]}" "$measured" << 'PY'
import json, sys
w = json.load(open(sys.argv[1]))
seed, flip = float(sys.argv[2]), float(sys.argv[3])
pred = w["predicted"]
measured = seed / flip if flip > 0 else 0
simulated = pred.get("simulated", True)
speedup = pred.get("speedup") or 0
err = speedup / measured - 1 if measured > 0 and simulated else None
note = "" if simulated else "not simulated: " + pred.get("not_simulated", "")
print("%.3f %.3f %s %s" % (speedup, measured, "n/a" if err is None else "%+.1f%%" % (100 * err),
                           ("ok" if err is not None and abs(err) <= 0.10 else "off") + ("|" + note if note else "")))
PY
)
    read -r predicted measured_speedup err verdict <<< "$row"
    note=${verdict#*|}
    [ "$note" = "$verdict" ] && note=""
    verdict=${verdict%%|*}
    n=$((n + 1))
    [ "$verdict" = "ok" ] && within=$((within + 1))
    echo "$flip: predicted ${predicted}x, measured ${measured_speedup}x, error $err $note"
    printf '| %-20s | %-40s | %8sx | %8sx | %7s | %s |\n' "$flip" "${whatif_of[$flip]}" "$predicted" \
      "$measured_speedup" "$err" "$note" >> "$tmp/whatif.md"
  done
  whatif_line="what-if against the switches: $within of $n predictions within 10 % of the measured speedup"
else
  skip "what-if predictions (needs gpuscope, the seed capture and the seed throughput run)"
fi
echo "$whatif_line"

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
