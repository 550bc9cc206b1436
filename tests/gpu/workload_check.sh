#!/usr/bin/env bash
# GPU check of the bundled workload (resnet-train), for a session that has the
# GPU machine (one H200). One call, under 10 minutes:
#
#   bash tests/gpu/workload_check.sh            # from the repository root
#
#  1. build (viewer off; cuDNN/NCCL found in the toolkit or in Python's
#     site-packages; if the full project cannot configure, a standalone build
#     of the workload and its kernel check)
#  2. every CUDA kernel against its C++ reference (workload_kernel_check)
#  3. --verify: one step of the whole network against the CPU reference, for
#     the presets and switch combinations (every code path of the step)
#  4. both presets train and their loss falls
#  5. throughput: seed, tuned, and each single switch flipped from seed
#  6. the same network in PyTorch (eager channels_last + bf16, torch.compile)
#  7. a capture of --preset seed and its report (padding + broadcast on top),
#     small captures of both presets for assets/
#
# Writes tests/gpu/results/workload-<UTC stamp>.log (everything) and .md (the
# table, with date, GPU and driver, and the lines `tuned vs eager: N.NNx`,
# `tuned vs compile: N.NNx`); with $OUT set (the device tool) copies results
# and captures there. Exit status: 0 when every check passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
stamp=$(date -u +%Y%m%d-%H%M)
results=tests/gpu/results
mkdir -p "$results" "$results/tmp"
log=$results/workload-$stamp.log
table=$results/workload-$stamp.md
tmp=$results/tmp
exec > >(tee "$log") 2>&1
failures=()
fail() { failures+=("$1"); echo "CHECK FAILED: $1"; }
section() { echo; echo "==== $* ($(date -u +%T))"; }
JOBS=$(nproc)

section "environment"
date -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: $gpu, driver $driver"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>/dev/null
nvcc --version 2>/dev/null | tail -2
python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null

# ---- 1. build ------------------------------------------------------------------
section "build"
# cuDNN / NCCL: the toolkit's, else the pip wheels PyTorch brought.
hints=()
libpath=""
for pkg in cudnn nccl; do
  dir=$(python3 -c "import nvidia.$pkg, os; print(os.path.dirname(nvidia.$pkg.__file__))" 2>/dev/null || \
        python3 -c "import nvidia.$pkg; print(list(nvidia.$pkg.__path__)[0])" 2>/dev/null || true)
  if [ -n "$dir" ] && [ -d "$dir/lib" ] && ! ls /usr/local/cuda/lib64/lib$pkg.so* >/dev/null 2>&1 && \
     ! ls /usr/local/cuda/include/$pkg.h >/dev/null 2>&1; then
    upper=$(echo "$pkg" | tr a-z A-Z)
    lib=$(ls "$dir"/lib/lib$pkg.so* | head -1)
    hints+=("-DGPUSCOPE_${upper}_LIB=$lib" "-DGPUSCOPE_${upper}_INCLUDE=$dir/include")
    libpath="$dir/lib:$libpath"
    echo "using $pkg from $dir"
  fi
done
export LD_LIBRARY_PATH="${libpath}${LD_LIBRARY_PATH:-}"
bin=build-gpu/bin
check=build-gpu/tests/workload_kernel_check
full_build=1
if ! cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCOPE_VIEWER=OFF -DGPUSCOPE_BUILD_BENCH=OFF \
     -DGPUSCOPE_CUDA=ON "${hints[@]}" > "$tmp/configure.log" 2>&1; then
  tail -5 "$tmp/configure.log"
  echo "full configure failed; building the workload alone (tests/gpu/workload_build)"
  full_build=0
  cmake -S tests/gpu/workload_build -B build-gpu-workload -G Ninja -DCMAKE_BUILD_TYPE=Release "${hints[@]}" \
    > "$tmp/configure.log" 2>&1 || { tail -20 "$tmp/configure.log"; fail "configure"; }
  bin=build-gpu-workload/bin
  check=build-gpu-workload/bin/workload_kernel_check
fi
targets="resnet-train workload_kernel_check"
[ "$full_build" = 1 ] && targets="$targets gpuscope"
if [ "$full_build" = 1 ]; then
  cmake --build build-gpu -j "$JOBS" --target $targets > "$tmp/build.log" 2>&1 || \
    cmake --build build-gpu -j "$JOBS" --target resnet-train workload_kernel_check >> "$tmp/build.log" 2>&1 || \
    { tail -30 "$tmp/build.log"; fail "build"; }
else
  cmake --build build-gpu-workload -j "$JOBS" > "$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; fail "build"; }
fi
grep -E "resnet-train|warning" "$tmp/build.log" | tail -5
rt=$bin/resnet-train
[ -x "$rt" ] || { fail "resnet-train was not built"; printf '%s\n' "${failures[@]}"; exit 1; }

# ---- 2. kernels vs references --------------------------------------------------------
section "kernels vs references"
if timeout 180 "$check" > "$tmp/kernels.log" 2>&1; then
  grep -c "^ok" "$tmp/kernels.log" | sed 's/^/kernel checks passed: /'
else
  grep -E "^FAIL" "$tmp/kernels.log" | head -20
  fail "workload_kernel_check"
fi
tail -1 "$tmp/kernels.log"
head -1 "$tmp/kernels.log"

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
  "--preset tuned --layout nchw --bias broadcast --bn naive"
)
for cfg in "${verify_configs[@]}"; do
  out=$(timeout 120 "$rt" --verify --batch 8 $cfg 2>&1)
  rc=$?
  echo "$out" | grep -E "^(loss|verify)|exceeds|error"
  [ $rc -eq 0 ] || fail "verify $cfg (exit $rc)"
done

# ---- 4. presets train ------------------------------------------------------------------------
section "presets train, loss falls"
for preset in seed tuned; do
  timeout 150 "$rt" --preset "$preset" --steps 300 --warmup 10 --log-every 100 > "$tmp/train-$preset.log" 2>&1
  rc=$?
  grep -E "^(step|summary|memory|ranks|input|cuda graph)" "$tmp/train-$preset.log"
  loss=$(grep -o "loss [0-9.]* -> [0-9.]*" "$tmp/train-$preset.log" | tail -1)
  first=$(echo "$loss" | awk '{print $2}')
  last=$(echo "$loss" | awk '{print $4}')
  if [ $rc -ne 0 ] || [ -z "$loss" ] || ! awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.7 * a) }'; then
    tail -3 "$tmp/train-$preset.log"
    fail "preset $preset trains (exit $rc, $loss)"
  fi
done

# ---- 5. throughput -------------------------------------------------------------------------------
section "throughput (1 GPU, batch 128)"
declare -A ips
run_config() {  # NAME FLAGS…
  local name=$1
  shift
  local out
  out=$(timeout 120 "$rt" --steps 150 --warmup 20 --log-every 150 "$@" 2>&1)
  local s
  s=$(echo "$out" | grep "^summary:")
  if [ -z "$s" ]; then
    echo "$out" | tail -3
    fail "throughput run $name"
    ips[$name]=0
    return
  fi
  ips[$name]=$(echo "$s" | grep -o "img/s per GPU=[0-9]*" | cut -d= -f2)
  local ms tf
  ms=$(echo "$s" | grep -o "step ms=[0-9.]*" | cut -d= -f2)
  tf=$(echo "$s" | grep -o "TFLOP/s per GPU=[0-9.]*" | cut -d= -f2)
  printf '| %-28s | %9s | %8s | %7s |\n' "$name" "${ips[$name]}" "$ms" "$tf" | tee -a "$tmp/rows.md"
  [ "$name" = "tuned" ] && echo "$out" | grep "^memory:" > "$tmp/tuned-memory.txt"
}
: > "$tmp/rows.md"
run_config "seed" --preset seed
run_config "tuned" --preset tuned
for flip in "--layout nhwc" "--padding fused" "--bias fused" "--bn transpose" "--bn fused" "--update overlap" \
            "--allreduce bucketed" "--data synthetic" "--precision tf32" "--precision bf16" "--graphs on"; do
  run_config "seed $flip" --preset seed $flip
done

# ---- 6. PyTorch on the same GPU -------------------------------------------------------------------
section "PyTorch baseline"
timeout 300 python3 tests/gpu/pytorch_baseline.py --steps 150 --warmup 30 > "$tmp/pytorch.log" 2>&1 || fail "pytorch baseline"
cat "$tmp/pytorch.log" | grep -vE "^\s*$" | tail -5
eager=$(grep -o "RESULT eager img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
compiled=$(grep -o "RESULT compile img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
tuned=${ips[tuned]:-0}
vs_eager="tuned vs eager: $(ratio "$tuned" "${eager:-0}")"
vs_compile="tuned vs compile: $(ratio "$tuned" "${compiled:-0}")"
echo "$vs_eager"
echo "$vs_compile"

# ---- 7. captures ----------------------------------------------------------------------------------------
section "capture of --preset seed"
capture() {  # PRESET FILE STEPS
  rm -f "$2"
  if "$rt" --preset "$1" --steps "$3" --warmup 5 --log-every "$3" --profile "$2" > "$tmp/capture-$1.log" 2>&1; then
    return 0
  fi
  # Built without the capture library: the CLI's injection path.
  [ -x "$bin/gpuscope" ] && "$bin/gpuscope" capture -o "$2" -- "$rt" --preset "$1" --steps "$3" --warmup 5 \
       --log-every "$3" >> "$tmp/capture-$1.log" 2>&1
}
report_line="capture report: not run"
if capture seed "$tmp/seed.gscope" 20 && [ -s "$tmp/seed.gscope" ]; then
  grep -E "^profile|error" "$tmp/capture-seed.log"
  if [ -x "$bin/gpuscope" ] && "$bin/gpuscope" report --json "$tmp/seed.gscope" > "$tmp/seed-report.json" 2> "$tmp/report.err"; then
    report_line=$(python3 tests/gpu/workload_profile_shape.py report "$tmp/seed-report.json")
  elif [ -x "$bin/gpuscope" ] && "$bin/gpuscope" export --format chrome -o "$tmp/seed.json" "$tmp/seed.gscope" 2>> "$tmp/report.err"; then
    # No `gpuscope report` in this build: the coarse check on the exported trace.
    report_line=$(python3 tests/gpu/workload_profile_shape.py chrome "$tmp/seed.json")
  else
    report_line="capture report: neither gpuscope report nor export worked ($(head -1 "$tmp/report.err" 2>/dev/null))"
  fi
  echo "$report_line"
  echo "$report_line" | grep -q "OK$" || fail "seed capture: padding + broadcast not >= 30% / not on top"
else
  tail -3 "$tmp/capture-seed.log" 2>/dev/null
  report_line="capture report: capture failed"
  fail "capture of --preset seed"
fi
capture tuned "$tmp/tuned.gscope" 20 || true
mkdir -p assets
for p in seed tuned; do
  if [ -s "$tmp/$p.gscope" ]; then
    cp "$tmp/$p.gscope" "assets/workload-$p.gscope"
    echo "assets/workload-$p.gscope: $(stat -c %s "assets/workload-$p.gscope") bytes"
  fi
done
if ls assets/workload-*.gscope > /dev/null 2>&1; then
  cat > assets/workload-captures.md <<EOT
# assets/workload-seed.gscope, assets/workload-tuned.gscope

Real captures of the bundled workload, made by tests/gpu/workload_check.sh on
$(date -u +%F): \`resnet-train --preset seed|tuned --steps 20 --warmup 5 --profile FILE\`
(the 20 timed steps only), one $gpu, driver $driver, batch 128.
EOT
fi

# ---- table -------------------------------------------------------------------------------------
section "results"
peak_bf16=989  # H100/H200 SXM dense BF16 TFLOP/s (tensor cores); fp32 non-tensor: 67
tuned_tf=$(grep "^| tuned " "$tmp/rows.md" | awk -F'|' '{gsub(/ /, "", $5); print $5}')
{
  echo "# resnet-train on $gpu ($(date -u +%F))"
  echo
  echo "GPU: $gpu; driver $driver; $(nvcc --version 2>/dev/null | tail -1)"
  echo "Command: bash tests/gpu/workload_check.sh (batch 128 per GPU, 1 GPU, 150 timed steps)"
  echo
  echo "| configuration                | img/s/GPU | ms/step | model TFLOP/s |"
  echo "|------------------------------|-----------|---------|---------------|"
  cat "$tmp/rows.md"
  echo
  echo "PyTorch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null): eager channels_last + bf16 autocast ${eager:-n/a} img/s; torch.compile ${compiled:-n/a} img/s"
  echo
  echo "$vs_eager"
  echo "$vs_compile"
  echo
  echo "tuned: ${tuned_tf:-n/a} model TFLOP/s = $(awk -v t="${tuned_tf:-0}" -v p=$peak_bf16 'BEGIN { printf "%.1f%%", 100 * t / p }') of the dense bf16 peak ($peak_bf16 TFLOP/s)"
  echo "tuned $(cat "$tmp/tuned-memory.txt" 2>/dev/null)"
  echo "$report_line"
  echo
  if ((${#failures[@]})); then echo "FAILED: ${failures[*]}"; else echo "all checks passed"; fi
} > "$table"
cat "$table"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/results" "$OUT/assets"
  cp "$log" "$table" "$OUT/results/"
  cp "$tmp"/*.log "$OUT/results/" 2>/dev/null
  cp assets/workload-*.gscope "$OUT/assets/" 2>/dev/null
fi
((${#failures[@]} == 0))
