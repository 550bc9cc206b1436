# shellcheck shell=bash disable=SC2034,SC2154  # sourced: its callers set and read its variables
# The GPU checks of the bundled workload (resnet-train), as functions for
# tests/gpu/device_run.sh and tests/gpu/workload_check.sh (sourced, never run).
#
# The caller sets rt (resnet-train), gs (gpuscope), check
# (workload_kernel_check), tmp (a scratch folder), assets (where the captures
# go), gpu and driver (for the captures' note), pytorch_cmd (the baseline
# command), and defines
#   fail TEXT          a check failed
#   skip TEXT          a check was skipped (say why)
#   section TEXT       a heading in the log
#   left               seconds left in the budget
#   cap SECONDS        SECONDS, or less when the budget has less left (at least 5)
#   enough SECONDS NAME   whether SECONDS are left for NAME (else skip it)
# then calls workload_init once. Each function leaves a one-line result in a
# global (kernels_line, verify_line, train_line[preset], ips[name],
# step_ms[name], eager, compiled, vs_eager, vs_compile, shape_line[preset],
# ops_line, sync_line, whatif_line) and rows in $tmp/rows.md (throughput) and
# $tmp/whatif.md (what-if).

# workload_init: the results, empty.
workload_init() {
  declare -gA train_line=() ips=() step_ms=() shape_line=()
  kernels_line="kernel checks: not run"
  verify_line="--verify: not run"
  ops_line="capture ops (seed): not run"
  sync_line="gradients across ranks: not run"
  whatif_line="what-if against the switches: not run"
  eager="" compiled="" vs_eager="tuned vs eager: n/a" vs_compile="tuned vs compile: n/a"
  : >"$tmp/rows.md"
  : >"$tmp/whatif.md"
}

# workload_kernels: every CUDA kernel against its C++ reference.
workload_kernels() {
  section "kernels vs references"
  enough 30 "kernel check" || return 0
  local rc
  timeout "$(cap 150)" "$check" >"$tmp/kernels.log" 2>&1
  rc=$?
  head -1 "$tmp/kernels.log"
  grep -E "^FAIL" "$tmp/kernels.log" | head -20
  kernels_line="kernel checks: $(grep -c '^ok' "$tmp/kernels.log") ok, $(grep -c '^FAIL' "$tmp/kernels.log") failed (exit $rc)"
  echo "$kernels_line"
  [ $rc -eq 0 ] || fail "workload_kernel_check (exit $rc)"
}

# workload_verify CONFIG…: one step of the whole network against the CPU
# reference (resnet-train --verify) for each configuration (flags in one word).
workload_verify() {
  section "--verify: one step against the CPU reference"
  local cfg out rc ok=0
  for cfg in "$@"; do
    enough 20 "verify $cfg" || continue
    # shellcheck disable=SC2086  # a configuration is several flags on purpose
    out=$(timeout "$(cap 90)" "$rt" --verify --batch 8 $cfg 2>&1)
    rc=$?
    echo "[$cfg]"
    echo "$out" | grep -E "^(loss|verify)|exceeds|error"
    if [ $rc -eq 0 ] && echo "$out" | grep -q "^verify: PASS"; then ok=$((ok + 1)); else fail "verify $cfg (exit $rc)"; fi
  done
  verify_line="--verify: $ok of $# configurations match the CPU reference"
}

# workload_train: both presets train for 300 steps and their loss falls by 30%.
workload_train() {
  section "presets train, loss falls"
  local preset rc loss first last
  for preset in seed tuned; do
    train_line[$preset]="not run"
    enough 40 "training $preset" || continue
    timeout "$(cap 120)" "$rt" --preset "$preset" --steps 300 --warmup 10 --log-every 100 >"$tmp/train-$preset.log" 2>&1
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
}

# workload_run_config NAME FLAGS…: throughput of one configuration on one GPU
# (150 timed steps), a row of $tmp/rows.md, ips[NAME] and step_ms[NAME].
workload_run_config() {
  local name=$1 out s ms tf
  shift
  ips[$name]=0
  enough 25 "throughput $name" || return 0
  out=$(timeout "$(cap 90)" "$rt" --gpus 1 --steps 150 --warmup 20 --log-every 150 "$@" 2>&1)
  s=$(echo "$out" | grep "^summary:")
  if [ -z "$s" ]; then
    echo "$out" | tail -3
    fail "throughput run $name"
    return 0
  fi
  echo "$s"
  ips[$name]=$(echo "$s" | grep -o "img/s per GPU=[0-9]*" | cut -d= -f2)
  ms=$(echo "$s" | grep -o "step ms=[0-9.]*" | cut -d= -f2)
  step_ms[$name]=$ms
  tf=$(echo "$s" | grep -o "TFLOP/s per GPU=[0-9.]*" | cut -d= -f2)
  printf '| %-28s | %9s | %8s | %7s |\n' "$name" "${ips[$name]}" "$ms" "$tf" >>"$tmp/rows.md"
  [ "$name" = "tuned" ] && echo "$out" | grep "^memory:" >"$tmp/tuned-memory.txt"
  return 0
}

# workload_throughput: seed and tuned.
workload_throughput() {
  section "throughput (1 GPU, batch 128)"
  workload_run_config "seed" --preset seed
  workload_run_config "tuned" --preset tuned
}

workload_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

# workload_pytorch STEPS WARMUP [SECONDS]: the same network in PyTorch, eager
# and torch.compile, on the same GPU: `tuned vs eager`, `tuned vs compile`
# (run when SECONDS, default 60, are left).
workload_pytorch() {
  section "PyTorch baseline"
  local torch_params rc
  if enough "${3:-60}" "PyTorch baseline"; then
    # shellcheck disable=SC2086  # pytorch_cmd is a command line
    timeout "$(cap 240)" $pytorch_cmd --steps "$1" --warmup "$2" >"$tmp/pytorch.log" 2>&1
    rc=$?
    # Cut at the time limit (torch.compile's compile is the slow part): what it printed is used.
    if [ $rc = 124 ]; then skip "pytorch baseline cut at its time limit (the modes it finished are used)"
    elif [ $rc != 0 ]; then fail "pytorch baseline (exit $rc)"; fi
    grep -vE "^\s*$" "$tmp/pytorch.log" | tail -5
    # The same network: resnet-train's exact parameter count (reference_net_test.cpp).
    torch_params=$(grep -o "NETWORK parameters=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
    [ "${torch_params:-0}" = 701466 ] || fail "pytorch baseline has ${torch_params:-?} parameters, resnet-train 701466"
    eager=$(grep -o "RESULT eager img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
    compiled=$(grep -o "RESULT compile img/s=[0-9]*" "$tmp/pytorch.log" | cut -d= -f2)
  fi
  vs_eager="tuned vs eager: $(workload_ratio "${ips[tuned]:-0}" "${eager:-0}")"
  vs_compile="tuned vs compile: $(workload_ratio "${ips[tuned]:-0}" "${compiled:-0}")"
  echo "$vs_eager"
  echo "$vs_compile"
}

# workload_capture_preset PRESET FILE STEPS: a capture of STEPS timed steps,
# through resnet-train --profile, else through `gpuscope capture`.
workload_capture_preset() {
  rm -f "$2"
  if timeout "$(cap 90)" "$rt" --gpus 1 --preset "$1" --steps "$3" --warmup 5 --log-every "$3" --profile "$2" \
    >"$tmp/capture-$1.log" 2>&1; then
    return 0
  fi
  # Built without the capture library: the CLI's injection path.
  [ -x "$gs" ] && timeout "$(cap 90)" "$gs" capture -o "$2" -- "$rt" --gpus 1 --preset "$1" --steps "$3" --warmup 5 \
    --log-every "$3" >>"$tmp/capture-$1.log" 2>&1
}

# workload_judge_capture PRESET: the shape of $tmp/PRESET.gscope's profile
# (workload_profile_shape.py), into shape_line[PRESET] (and ops_line for seed).
workload_judge_capture() {
  local preset=$1 file=$tmp/$1.gscope
  grep -E "^profile|error" "$tmp/capture-$preset.log"
  if [ -x "$gs" ] && "$gs" report --json -o "$tmp/$preset-report.json" "$file" 2>"$tmp/report-$preset.err"; then
    shape_line[$preset]=$(python3 tests/gpu/workload_profile_shape.py report "$preset" "$tmp/$preset-report.json")
    "$gs" report "$file" 2>&1 | head -40
    if [ "$preset" = seed ]; then
      ops_line=$(python3 tests/gpu/workload_profile_shape.py ops seed "$tmp/seed-report.json")
      echo "$ops_line"
      echo "$ops_line" | grep -q "OK$" || fail "seed capture's op table (layer ranges)"
    fi
  elif [ -x "$gs" ] && "$gs" export --format chrome -o "$tmp/$preset.json" "$file" 2>>"$tmp/report-$preset.err"; then
    shape_line[$preset]=$(python3 tests/gpu/workload_profile_shape.py chrome "$preset" "$tmp/$preset.json")
  else
    shape_line[$preset]="capture report ($preset): neither gpuscope report nor export worked: $(head -1 "$tmp/report-$preset.err" 2>/dev/null)"
  fi
  echo "${shape_line[$preset]}"
  echo "${shape_line[$preset]}" | grep -q "OK$" || fail "$preset capture shape"
}

# workload_captures STEPS: captures of --preset seed and --preset tuned judged
# by their profile's shape; they become $assets/workload-{seed,tuned}.gscope
# with a note of how they were made ($assets/workload-captures.md).
workload_captures() {
  section "captures of --preset seed and --preset tuned"
  local preset p
  for preset in seed tuned; do
    shape_line[$preset]="capture report ($preset): not run"
    enough 25 "capture of $preset" || continue
    if workload_capture_preset "$preset" "$tmp/$preset.gscope" "$1" && [ -s "$tmp/$preset.gscope" ]; then
      workload_judge_capture "$preset"
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
  if compgen -G "$assets/workload-*.gscope" >/dev/null; then
    cat >"$assets/workload-captures.md" <<EOT
# assets/workload-seed.gscope, assets/workload-tuned.gscope

Real captures of the bundled workload, made by ${WORKLOAD_CAPTURES_BY:-tests/gpu/workload_check.sh} on
$(date -u +%F): \`resnet-train --gpus 1 --preset seed|tuned --steps $1 --warmup 5 --profile FILE\`
(the $1 timed steps only), one ${gpu:-GPU}, driver ${driver:-unknown}, batch 128.
EOT
  fi
}

# workload_sync_run LABEL COMMAND…: passes when the run says "bit-identical ... yes".
workload_sync_run() {
  local label=$1 out rc
  shift
  out=$(timeout "$(cap 90)" "$@" 2>&1)
  rc=$?
  echo "$out" | grep -E "^(gradients|ranks|summary)|error"
  if [ $rc -eq 0 ] && echo "$out" | grep -q "^gradients bit-identical across .* after every step: yes"; then
    return 0
  fi
  fail "$label (exit $rc)"
  return 1
}

# workload_sync NGPUS: gradients bit-identical across ranks after every step
# (--check-sync) with 2 GPUs when there are 2, and under mpirun when built with MPI.
workload_sync() {
  section "gradients bit-identical across ranks (--check-sync)"
  enough 30 "rank sync" || return 0
  local ok=0 preset np
  if [ "${1:-0}" -ge 2 ]; then
    for preset in seed tuned; do
      workload_sync_run "check-sync $preset --gpus 2" "$rt" --preset "$preset" --gpus 2 --steps 30 --warmup 2 \
        --log-every 30 --check-sync && ok=$((ok + 1))
    done
    sync_line="gradients across 2 ranks (threads): bit-identical after every step in $ok of 2 presets"
  else
    workload_sync_run "check-sync tuned --gpus 1" "$rt" --preset tuned --gpus 1 --steps 10 --warmup 2 --log-every 10 \
      --check-sync
    sync_line="gradients across ranks: NOT CHECKED, one GPU (NCCL refuses two ranks on one device); the one-rank --check-sync path ran"
  fi
  if command -v mpirun >/dev/null 2>&1 && ldd "$rt" 2>/dev/null | grep -q libmpi; then
    np=$([ "${1:-0}" -ge 2 ] && echo 2 || echo 1)
    workload_sync_run "mpirun -np $np" mpirun --allow-run-as-root -np "$np" "$rt" --preset tuned --steps 10 --warmup 2 \
      --log-every 10 --check-sync && sync_line="$sync_line; mpirun -np $np: ok"
  else
    sync_line="$sync_line; mpirun: not run (no mpirun, or resnet-train built without MPI)"
  fi
  echo "$sync_line"
}

# The switches flipped one at a time from seed, the ones gpuscope whatif
# models first (docs/whatif.md): each switch and the whatif change that models it.
WORKLOAD_SWITCHES=("--padding fused" "--bias fused" "--bn fused" "--update overlap" "--allreduce bucketed"
  "--data synthetic" "--graphs on" "--precision tf32" "--layout nhwc" "--bn transpose" "--precision bf16")
declare -A WORKLOAD_WHATIF_OF=(
  ["--padding fused"]="--remove padding"
  ["--bias fused"]="--remove broadcast"
  ["--bn fused"]="--scale normalization=0.5"
  ["--update overlap"]="--overlap-update"
  ["--allreduce bucketed"]="--overlap-allreduce"
  ["--data synthetic"]="--no-input-wait"
  ["--graphs on"]="--cuda-graphs"
  ["--precision tf32"]="--scale convolution=0.5 --scale gemm=0.5"
)

# workload_switches: throughput of each single switch flipped from seed (as time allows).
workload_switches() {
  section "throughput: single switches flipped from seed"
  local flip
  for flip in "${WORKLOAD_SWITCHES[@]}"; do
    # shellcheck disable=SC2086  # a switch is a flag and its value
    workload_run_config "seed $flip" --preset seed $flip
  done
}

# workload_whatif_row FLIP: gpuscope whatif's prediction for one switch
# against the speedup measured by workload_switches; a row of $tmp/whatif.md.
# Sets WHATIF_VERDICT: "ok" or "off" (within 10 % or not), empty when it could
# not compare.
workload_whatif_row() {
  local flip=$1 measured=${step_ms["seed $1"]:-} row predicted measured_speedup err verdict note
  WHATIF_VERDICT=""
  # shellcheck disable=SC2086  # the change is several words on purpose
  if ! timeout "$(cap 60)" "$gs" whatif --json "$tmp/seed.gscope" ${WORKLOAD_WHATIF_OF[$flip]} >"$tmp/whatif.json" \
    2>"$tmp/whatif.err"; then
    echo "$flip: gpuscope whatif ${WORKLOAD_WHATIF_OF[$flip]} failed: $(head -1 "$tmp/whatif.err")"
    printf '| %-20s | %-40s | %9s | %9s | %7s | %s |\n' "$flip" "${WORKLOAD_WHATIF_OF[$flip]}" "-" "-" "-" \
      "whatif failed: $(head -1 "$tmp/whatif.err")" >>"$tmp/whatif.md"
    return 0
  fi
  row=$(python3 - "$tmp/whatif.json" "${step_ms[seed]}" "$measured" <<'PY'
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
  read -r predicted measured_speedup err verdict <<<"$row"
  note=${verdict#*|}
  [ "$note" = "$verdict" ] && note=""
  verdict=${verdict%%|*}
  echo "$flip: predicted ${predicted}x, measured ${measured_speedup}x, error $err $note"
  printf '| %-20s | %-40s | %8sx | %8sx | %7s | %s |\n' "$flip" "${WORKLOAD_WHATIF_OF[$flip]}" "$predicted" \
    "$measured_speedup" "$err" "$note" >>"$tmp/whatif.md"
  WHATIF_VERDICT=$verdict
}

# workload_whatif: `gpuscope whatif` on the seed capture predicts each
# switch's speedup, against the speedup measured by workload_switches (the
# goal: within 10 %).
workload_whatif() {
  section "what-if: predictions from the seed capture against the single switches"
  if ! [ -x "$gs" ] || ! [ -s "$tmp/seed.gscope" ] || [ -z "${step_ms[seed]:-}" ]; then
    skip "what-if predictions (needs gpuscope, the seed capture and the seed throughput run)"
    return 0
  fi
  local n=0 within=0 flip
  for flip in "${WORKLOAD_SWITCHES[@]}"; do
    [ -n "${WORKLOAD_WHATIF_OF[$flip]:-}" ] || continue
    if [ -z "${step_ms["seed $flip"]:-}" ]; then
      echo "$flip: no measured step time (the switches' runs did not run it)"
      continue
    fi
    enough 10 "whatif $flip" || break
    workload_whatif_row "$flip"
    [ -n "$WHATIF_VERDICT" ] || continue
    n=$((n + 1))
    [ "$WHATIF_VERDICT" = "ok" ] && within=$((within + 1))
  done
  whatif_line="what-if against the switches: $within of $n predictions within 10 % of the measured speedup"
  echo "$whatif_line"
}
