# shellcheck shell=bash disable=SC2034,SC2154  # sourced: its callers set and read its variables
# The GPU checks of the hardware metrics a capture records (PM sampling and
# NVML), as functions for tests/gpu/device_run.sh and
# tests/gpu/metrics_check.sh (sourced, never run).
#
# The caller sets GS (gpuscope), R (resnet-train) and WORK (a scratch folder),
# and defines row, say, cap and left as for tests/gpu/lib/capture.sh.

# metrics_series_stats TRACE SERIES: "MEAN COUNT" of one series of a trace,
# over every device, through the SQLite export.
metrics_series_stats() {
  local db
  db="$WORK/$(basename "$1").sqlite"
  [ -e "$db" ] || "$GS" export "$1" -o "$db" --format sqlite >/dev/null 2>&1
  python3 - "$db" "$2" <<'EOF'
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    row = c.execute("SELECT AVG(v.value), COUNT(v.value) FROM GPUSCOPE_COUNTERS v JOIN GPUSCOPE_COUNTER_SERIES s "
                    "ON v.seriesId = s.id WHERE s.name = ?", (sys.argv[2],)).fetchone()
except sqlite3.Error:
    row = (None, None)
print("%.2f %d" % (row[0] or 0.0, row[1] or 0))
EOF
}

# metrics_property TRACE KEY: a meta property as `gpuscope info` shows it.
metrics_property() { "$GS" info "$1" 2>/dev/null | awk -v k="$2" '$1 == k {$1 = ""; sub(/^ +/, ""); print}'; }

# metrics_stat TRACE KEY: a meta statistic (a number) as `gpuscope info` shows it.
metrics_stat() { "$GS" info "$1" 2>/dev/null | awk -v k="$2" '$1 == k {print $2}' | tr -d ',' | head -1; }

# metrics_preset PRESET ROUNDS STEPS: resnet-train --preset PRESET plain,
# captured with --gpu-metrics none and with the default metrics (10 kHz),
# interleaved ROUNDS times: the sampling overhead (target <= 1%), whether PM
# sampling ran (else the clean fallback and its reason, with NVML's series
# still there), samples lost, mean SM and tensor activity. Sets SM_<PRESET>
# (the mean of hw.sm_active) when PM sampling ran, and METRICS_PM (ran|off: why).
metrics_preset() {
  local preset=$1 args=(--preset "$1" --steps "$3" --warmup 20) i p n h pct t gm nv sm smn tn tnn clk clkn lost_pm lost_nv
  say "resnet-train --preset $preset: plain, capture without metrics, capture with metrics ($2 rounds)"
  METRICS_PM="not measured: no trace with metrics"
  : >"$WORK/$preset-plain.txt"
  : >"$WORK/$preset-none.txt"
  : >"$WORK/$preset-hw.txt"
  for ((i = 1; i <= $2; i++)); do
    [ "$i" = 1 ] || [ "$(left)" -gt 40 ] || break
    timeout "$(cap 150)" "$R" "${args[@]}" >>"$WORK/$preset-plain.txt" 2>&1
    timeout "$(cap 180)" "$GS" capture --gpu-metrics none -o "$WORK/$preset-none.gscope" -- "$R" "${args[@]}" \
      >>"$WORK/$preset-none.txt" 2>&1
    timeout "$(cap 180)" "$GS" capture -o "$WORK/$preset-hw.gscope" -- "$R" "${args[@]}" >>"$WORK/$preset-hw.txt" 2>&1
  done
  p=$(grep -o 'step ms=[0-9.]*' "$WORK/$preset-plain.txt" | cut -d= -f2 | gpu_median)
  n=$(grep -o 'step ms=[0-9.]*' "$WORK/$preset-none.txt" | cut -d= -f2 | gpu_median)
  h=$(grep -o 'step ms=[0-9.]*' "$WORK/$preset-hw.txt" | cut -d= -f2 | gpu_median)
  pct=$(awk -v h="$h" -v n="$n" 'BEGIN {if (n > 0) printf "%.2f", 100 * (h / n - 1); else print "nan"}')
  row "$preset: sampling overhead in step time" "<= 1% at 10 kHz" "$pct% ($h vs $n ms/step; plain $p)" \
    "$(awk -v x="$pct" 'BEGIN {print (x != "nan" && x <= 1.0) ? "PASS" : "FAIL"}')"

  t="$WORK/$preset-hw.gscope"
  [ -e "$t" ] || { row "$preset: trace with metrics" "written" "missing" FAIL; return; }
  gm=$(metrics_property "$t" capture.gpu_metrics)
  nv=$(metrics_property "$t" capture.nvml)
  echo "capture.gpu_metrics: $gm"
  echo "capture.nvml: $nv"
  echo "capture.gpu_metrics.dropped: $(metrics_property "$t" capture.gpu_metrics.dropped)"
  read -r sm smn <<<"$(metrics_series_stats "$t" hw.sm_active)"
  read -r tn tnn <<<"$(metrics_series_stats "$t" hw.tensor_active)"
  read -r clk clkn <<<"$(metrics_series_stats "$t" nvml.sm_clock)"
  lost_pm=$(metrics_stat "$t" capture.samples.pm_sampling.lost)
  lost_nv=$(metrics_stat "$t" capture.samples.nvml.lost)
  if [ "${smn:-0}" -gt 0 ]; then
    METRICS_PM="ran"
    row "$preset: PM sampling" "runs" "ran: $gm" PASS
    row "$preset: hw.sm_active mean" "seed < tuned" "$sm% over $smn samples" INFO
    row "$preset: hw.tensor_active mean" "measured" "$tn% over $tnn samples" INFO
    row "$preset: PM samples lost" "0" "${lost_pm:-?}" "$([ "${lost_pm:-1}" = 0 ] && echo PASS || echo FAIL)"
    printf -v "SM_$preset" '%s' "$sm"
  else
    # A sandboxed GPU: the fallback must be clean and say why.
    METRICS_PM="off: ${gm:-no note}"
    row "$preset: PM sampling" "runs, or says why not" "did not run: ${gm:-no note}" "$([ -n "$gm" ] && echo INFO || echo FAIL)"
  fi
  if [ "${clkn:-0}" -gt 0 ]; then
    row "$preset: NVML series" "present" "nvml.sm_clock mean $clk MHz over $clkn samples; lost ${lost_nv:-?}" PASS
  else
    row "$preset: NVML series" "present" "missing: ${nv:-no note}" FAIL
  fi
}

# metrics_compare_presets: SM activity of seed against tuned, when both ran.
metrics_compare_presets() {
  [ -n "${SM_seed:-}" ] && [ -n "${SM_tuned:-}" ] || return 0
  row "SM active, seed against tuned" "seed lower" "$SM_seed% vs $SM_tuned%" \
    "$(awk -v s="$SM_seed" -v t="$SM_tuned" 'BEGIN {print (s < t) ? "PASS" : "FAIL"}')"
}
