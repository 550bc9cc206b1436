# shellcheck shell=bash disable=SC2034,SC2154  # sourced: its callers set and read its variables
# The GPU checks of gpuscope's CUPTI capture, as functions for
# tests/gpu/device_run.sh and tests/gpu/capture_check.sh (sourced, never run).
#
# The caller sets GS (the gpuscope executable), T (the folder with
# capture_workload, capture_verify, capture_smoke, launch_bench), WORK (a
# scratch folder) and NCCL_FLAG (empty; capture_known_work sets it to
# --no-nccl when capture_workload was built without NCCL), and defines
#   row CHECK TARGET MEASURED PASS|FAIL|SKIP|INFO   one result
#   say TEXT                                        a heading in the log
#   cap SECONDS                                     SECONDS, or less when the budget has less left
#   left                                            seconds left in the budget
# Every program runs under `timeout "$(cap N)"`, so a check never outlives
# the caller's budget by more than a few seconds.

# capture_verify NAME FILE ARGS…: capture_verify ARGS FILE, as one row.
capture_verify() {
  local name=$1 file=$2
  shift 2
  if [ ! -s "$file" ]; then
    row "$name" "trace matches the program" "no trace file" FAIL
    return
  fi
  if timeout "$(cap 60)" "$T/capture_verify" "$@" $NCCL_FLAG "$file" >"$WORK/verify.txt" 2>&1; then
    row "$name" "trace matches the program" "$(grep -c '^PASS' "$WORK/verify.txt") checks pass" PASS
  else
    row "$name" "trace matches the program" "$(grep '^FAIL' "$WORK/verify.txt" | cut -c6- | tr '\n' ';' | cut -c1-300)" FAIL
  fi
  cat "$WORK/verify.txt"
}

# capture_first PATTERN: the first file matching a glob, or nothing.
capture_first() { compgen -G "$1" | head -1; }

# capture_known_work: capture_workload (two overlapping streams, NVTX ranges,
# pageable and pinned copies, memsets, a CUDA graph, an NCCL all-reduce)
# through `gpuscope capture`, in-process, and with both capture ranges; each
# trace against what the program did.
capture_known_work() {
  say "capture_workload under gpuscope capture"
  timeout "$(cap 120)" "$GS" capture -o "$WORK/full-%p.gscope" -- "$T/capture_workload" | tee "$WORK/full.txt"
  echo "exit status ${PIPESTATUS[0]}"
  grep -q 'nccl phase skipped' "$WORK/full.txt" && NCCL_FLAG="--no-nccl"
  local f
  f=$(capture_first "$WORK/full-*.gscope")
  capture_verify "gpuscope capture -- capture_workload" "$f" --expect full
  [ -n "$f" ] && { "$GS" info "$f" 2>&1 | head -60 || true; }

  say "capture_workload capturing itself (in-process API)"
  timeout "$(cap 120)" "$T/capture_workload" --in-process "$WORK/inproc.gscope"
  echo "exit status $?"
  capture_verify "in-process capture of capture_workload" "$WORK/inproc.gscope" --expect full

  say "capture ranges"
  timeout "$(cap 120)" "$GS" capture --capture-range nvtx:graph -o "$WORK/rgraph-%p.gscope" -- "$T/capture_workload"
  capture_verify "--capture-range nvtx:graph" "$(capture_first "$WORK/rgraph-*.gscope")" --expect range-graph
  timeout "$(cap 120)" "$GS" capture --capture-range cuda-profiler-api -o "$WORK/rcopies-%p.gscope" -- \
    "$T/capture_workload"
  capture_verify "--capture-range cuda-profiler-api" "$(capture_first "$WORK/rcopies-*.gscope")" --expect range-copies
}

# capture_exit_signals KILL_AFTER_S: the program's exit status passes through,
# a child writes its own file, SIGTERM mid-run leaves a complete file.
capture_exit_signals() {
  say "exit status and signals"
  local st cf kf kinfo gp
  timeout "$(cap 60)" "$GS" capture -o "$WORK/st-%p.gscope" -- /bin/sh -c "$T/capture_workload >/dev/null; exit 5"
  st=$?
  row "exit status passes through" "5" "$st" "$([ $st = 5 ] && echo PASS || echo FAIL)"
  cf=$(capture_first "$WORK/st-*.gscope")
  row "a child process writes its own file" "sh -> capture_workload: 1 file" "${cf:+$(basename "$cf")}${cf:-none}" \
    "$([ -n "$cf" ] && "$T/capture_verify" $NCCL_FLAG "$cf" >/dev/null 2>&1 && echo PASS || echo FAIL)"
  "$GS" capture -o "$WORK/killed-%p.gscope" -- "$T/launch_bench" --seconds 30 &
  gp=$!
  sleep "$1"
  kill -TERM $gp
  wait $gp
  st=$?
  kf=$(capture_first "$WORK/killed-*.gscope")
  kinfo=$([ -n "$kf" ] && "$T/capture_verify" --expect range-copies "$kf" 2>&1 | grep 'file complete' || echo "no file")
  row "SIGTERM mid-run: file finished" "status 143, complete file" "status $st; ${kinfo:-?}" \
    "$([ $st = 143 ] && echo "$kinfo" | grep -q '^PASS' && echo PASS || echo FAIL)"
}

# capture_busy: CUPTI already taken — the program's own start() against the
# injected library in one process. Whichever subscribes first wins; the other
# must say so and the program run on.
capture_busy() {
  say "CUPTI already taken: the program's own start() and the injected library in one process"
  local st busy of won nfiles
  timeout "$(cap 120)" "$GS" capture -o "$WORK/outer-%p.gscope" -- "$T/capture_workload" --in-process \
    "$WORK/inner.gscope" >"$WORK/busy.txt" 2>&1
  st=$?
  cat "$WORK/busy.txt"
  busy=$(grep -c 'already in use by another profiler' "$WORK/busy.txt")
  of=$(capture_first "$WORK/outer-*.gscope")
  [ -e "$WORK/inner.gscope" ] && won="$WORK/inner.gscope" || won="$of"
  nfiles=$(($([ -e "$WORK/inner.gscope" ] && echo 1 || echo 0) + $([ -n "$of" ] && echo 1 || echo 0)))
  row "CUPTI busy (MULTIPLE_SUBSCRIBERS): program unharmed, said clearly" "status 0, message, exactly 1 of 2 files" \
    "status $st; message lines $busy; $nfiles file(s)" \
    "$([ $st = 0 ] && [ "$busy" -ge 1 ] && [ $nfiles = 1 ] && echo PASS || echo FAIL)"
  capture_verify "the capture that won CUPTI" "$won" --expect full
}

# capture_processes: fork without exec, two CUDA children with -o %r %h %n,
# no visible GPU.
capture_processes() {
  say "fork without exec"
  local st nf host k1 k2 kok k8 said f
  timeout "$(cap 120)" "$GS" capture -o "$WORK/fork-%p.gscope" -- "$T/capture_workload" --fork >"$WORK/fork.txt" 2>&1
  st=$?
  cat "$WORK/fork.txt"
  nf=$(compgen -G "$WORK/fork-*.gscope" | wc -l)
  row "fork without exec: the child is inert" "status 0, 1 file (the parent's)" "status $st; $nf file(s)" \
    "$([ $st = 0 ] && [ "$nf" = 1 ] && echo PASS || echo FAIL)"
  capture_verify "capture of a program that forked" "$(capture_first "$WORK/fork-*.gscope")" --expect full

  say "two CUDA children, output pattern %r %h %n"
  host=$(hostname)
  RANK=3 timeout "$(cap 90)" "$GS" capture -o "$WORK/kids-r%r-%h-%n.gscope" -- \
    /bin/sh -c "$T/capture_smoke & $T/capture_smoke; wait" >"$WORK/kids.txt" 2>&1
  st=$?
  cat "$WORK/kids.txt"
  k1="$WORK/kids-r3-$host-1.gscope"
  k2="$WORK/kids-r3-$host-2.gscope"
  kok=0
  for f in "$k1" "$k2"; do [ -s "$f" ] && "$GS" info "$f" >/dev/null 2>&1 && kok=$((kok + 1)); done
  k8=$(grep -c 'kernels 8,' "$WORK/kids.txt")
  row "each CUDA child writes its own file (%r %h %n)" "2 readable files, 8 kernels each" \
    "status $st; $kok readable of kids-r3-$host-{1,2}.gscope; $k8 summaries with 8 kernels" \
    "$([ $st = 0 ] && [ $kok = 2 ] && [ "$k8" = 2 ] && echo PASS || echo FAIL)"

  say "no visible GPU (CUDA_VISIBLE_DEVICES=\"\")"
  CUDA_VISIBLE_DEVICES="" timeout "$(cap 60)" "$GS" capture -o "$WORK/nodev-%p.gscope" -- "$T/capture_smoke" \
    >"$WORK/nodev.txt" 2>&1
  st=$?
  cat "$WORK/nodev.txt"
  said=$(grep -cE 'no CUDA device|nothing (was )?captured' "$WORK/nodev.txt")
  row "no visible GPU: program unharmed, said clearly" "status 7 (the program's), message" \
    "status $st; message lines $said" "$([ $st = 7 ] && [ "$said" -ge 1 ] && echo PASS || echo FAIL)"
}

# capture_window: --delay 2 --duration 3 on an 8 s launch loop records about
# 3/8 of its kernels.
capture_window() {
  say "--delay 2 --duration 3 on an 8 s launch loop"
  local tl tk fr
  timeout "$(cap 60)" "$GS" capture --delay 2 --duration 3 -o "$WORK/timed-%p.gscope" -- "$T/launch_bench" --seconds 8 \
    >"$WORK/timed.txt" 2>"$WORK/timed.err"
  cat "$WORK/timed.txt" "$WORK/timed.err"
  tl=$(grep -o 'launches=[0-9]*' "$WORK/timed.txt" | cut -d= -f2)
  tk=$(grep -o 'kernels [0-9,]*' "$WORK/timed.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  fr=$(awk -v k="${tk:-0}" -v l="${tl:-0}" 'BEGIN {if (l > 0) printf "%.2f", k / (l + 2000); else print "nan"}')
  row "--delay/--duration record only their window" "about 3/8 of the kernels (0.20-0.55)" \
    "${tk:-?} of $((${tl:-0} + 2000)) kernels ($fr)" "$(awk -v f="$fr" 'BEGIN {print (f >= 0.20 && f <= 0.55) ? "PASS" : "FAIL"}')"
}

# capture_pytorch_script: a small PyTorch script under gpuscope capture.
capture_pytorch_script() {
  say "a PyTorch script (python3 under gpuscope capture)"
  local py st tk tf
  py='import torch
x = torch.randn(1024, 1024, device="cuda")
for _ in range(20): x = torch.tanh(x @ x)
torch.cuda.synchronize()
print("torch ok", torch.__version__, torch.version.cuda)'
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    row "PyTorch script under gpuscope capture" "status 0, >= 40 kernels" "skipped: no PyTorch with CUDA here" SKIP
    return
  fi
  timeout "$(cap 120)" "$GS" capture -o "$WORK/torch-%p.gscope" -- python3 -c "$py" >"$WORK/torch.txt" 2>&1
  st=$?
  cat "$WORK/torch.txt"
  tk=$(grep -o 'kernels [0-9,]*' "$WORK/torch.txt" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  tf=$(capture_first "$WORK/torch-*.gscope")
  row "PyTorch script under gpuscope capture" "status 0, >= 40 kernels, readable file" "status $st; ${tk:-0} kernels" \
    "$([ $st = 0 ] && [ "${tk:-0}" -ge 40 ] && [ -n "$tf" ] && "$GS" info "$tf" >/dev/null 2>&1 && echo PASS || echo FAIL)"
}

# capture_launch_overhead PAIRS LAUNCHES: launch_bench with and without
# capture, interleaved (the order alternates), medians. Target <= 1 us.
capture_launch_overhead() {
  say "launch overhead (launch_bench $2, $1 interleaved pairs)"
  : >"$WORK/plain.txt"
  : >"$WORK/cap.txt"
  local i mode p c pe ce d de
  for ((i = 1; i <= $1; i++)); do
    [ "$(left)" -gt 20 ] || break
    for mode in plain cap; do
      [ $((i % 2)) = 0 ] && mode=$([ $mode = plain ] && echo cap || echo plain)  # alternate the order
      if [ $mode = plain ]; then
        timeout "$(cap 120)" "$T/launch_bench" "$2" | tee -a "$WORK/plain.txt"
      else
        timeout "$(cap 180)" "$GS" capture -o "$WORK/lb.gscope" -- "$T/launch_bench" "$2" 2>"$WORK/lb.err" |
          tee -a "$WORK/cap.txt"
        cat "$WORK/lb.err"
        rm -f "$WORK/lb.gscope"
      fi
    done
  done
  p=$(gpu_values us_per_launch "$WORK/plain.txt" | gpu_median)
  c=$(gpu_values us_per_launch "$WORK/cap.txt" | gpu_median)
  pe=$(gpu_values us_per_kernel_end_to_end "$WORK/plain.txt" | gpu_median)
  ce=$(gpu_values us_per_kernel_end_to_end "$WORK/cap.txt" | gpu_median)
  d=$(awk -v c="$c" -v p="$p" 'BEGIN {printf "%.3f", c - p}')
  de=$(awk -v c="$ce" -v p="$pe" 'BEGIN {printf "%.3f", c - p}')
  CAPTURE_LAUNCH_US=$d
  row "launch overhead (host, per launch)" "<= 1 us" "$d us (median $c vs $p us)" \
    "$(awk -v d="$d" 'BEGIN {print (d != "nan" && d <= 1.0) ? "PASS" : "FAIL"}')"
  row "launch overhead (end to end, per kernel)" "(reported)" "$de us (median $ce vs $pe us)" INFO
  grep -h 'kernels [0-9,]*' "$WORK/lb.err" 2>/dev/null | tail -1
}

# capture_full_rate LONG_S SHORT_S: LONG_S seconds at full launch rate under
# capture: no dropped records, and memory bounded by the pool (peak RSS after
# LONG_S close to that after SHORT_S).
capture_full_rate() {
  say "$1 s at full launch rate"
  local l hw_long hw_short drop ker pool
  timeout "$(cap $(($1 + 60)))" "$GS" capture -o "$WORK/long-%p.gscope" -- "$T/launch_bench" --seconds "$1" \
    >"$WORK/long.txt" 2>"$WORK/long.err"
  cat "$WORK/long.txt" "$WORK/long.err"
  l=$(grep -o 'launches=[0-9]*' "$WORK/long.txt" | cut -d= -f2)
  hw_long=$(grep -o 'vmhwm_kb=[0-9]*' "$WORK/long.txt" | cut -d= -f2)
  drop=$(grep -o 'dropped records [0-9,]*' "$WORK/long.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  ker=$(grep -o 'kernels [0-9,]*' "$WORK/long.err" | head -1 | grep -o '[0-9,]*$' | tr -d ,)
  pool=$(grep -o 'buffer memory peak [0-9.]* [KMG]iB' "$WORK/long.err" | head -1)
  CAPTURE_DROPPED=${drop:-?}
  row "$1 s at full launch rate: dropped records" "0" "${drop:-?} dropped; ${ker:-?} kernels kept of $((${l:-0} + 2000)) launched" \
    "$([ "${drop:-x}" = 0 ] && [ "${ker:-0}" = $((${l:-0} + 2000)) ] && echo PASS || echo FAIL)"
  rm -f "$WORK"/long-*.gscope
  timeout "$(cap $(($2 + 45)))" "$GS" capture -o "$WORK/short-%p.gscope" -- "$T/launch_bench" --seconds "$2" \
    >"$WORK/short.txt" 2>"$WORK/short.err"
  hw_short=$(grep -o 'vmhwm_kb=[0-9]*' "$WORK/short.txt" | cut -d= -f2)
  rm -f "$WORK"/short-*.gscope
  row "memory bounded by the pool (peak RSS $1 s vs $2 s)" "no growth with run length" \
    "$((${hw_long:-0} / 1024)) MiB vs $((${hw_short:-0} / 1024)) MiB; $pool" \
    "$(awk -v a="${hw_long:-}" -v b="${hw_short:-}" 'BEGIN {print (a != "" && b != "" && a - b < 65536) ? "PASS" : "FAIL"}')"
}

# capture_resnet_overhead RESNET ROUNDS STEPS: resnet-train --preset tuned
# with and without capture, interleaved, medians of the step time. Target <= 3%.
capture_resnet_overhead() {
  say "resnet-train --preset tuned ($2 interleaved pairs)"
  local args=(--preset tuned --steps "$3" --warmup 20) i rp rc pct
  : >"$WORK/r-plain.txt"
  : >"$WORK/r-cap.txt"
  for ((i = 1; i <= $2; i++)); do
    [ "$(left)" -gt 30 ] || break
    timeout "$(cap 120)" "$1" "${args[@]}" | tee -a "$WORK/r-plain.txt" | grep summary
    timeout "$(cap 150)" "$GS" capture -o "$WORK/resnet.gscope" -- "$1" "${args[@]}" 2>"$WORK/r.err" |
      tee -a "$WORK/r-cap.txt" | grep summary
    cat "$WORK/r.err"
    rm -f "$WORK/resnet.gscope"
  done
  rp=$(grep -o 'step ms=[0-9.]*' "$WORK/r-plain.txt" | cut -d= -f2 | gpu_median)
  rc=$(grep -o 'step ms=[0-9.]*' "$WORK/r-cap.txt" | cut -d= -f2 | gpu_median)
  pct=$(awk -v c="$rc" -v p="$rp" 'BEGIN {if (p > 0) printf "%.2f", 100 * (c / p - 1); else print "nan"}')
  CAPTURE_STEP_PCT=$pct
  row "resnet-train tuned step time overhead" "<= 3%" "$pct% ($rc vs $rp ms/step)" \
    "$(awk -v x="$pct" 'BEGIN {print (x != "nan" && x <= 3.0) ? "PASS" : "FAIL"}')"
  grep -h 'dropped records' "$WORK/r.err" | tail -1
}
