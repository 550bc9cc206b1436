#!/usr/bin/env bash
# CPU test of tests/gpu/workload_profile_shape.py, the judge of the GPU check's
# captures: on Chrome traces shaped like --preset seed (the workload's pad and
# broadcast kernels taking 40% of one serial stream) and like --preset tuned
# (no pad/broadcast, an update stream beside the compute stream), through
# `gpuscope report --json` (the real classifier) and through the
# import -> export chrome fallback, it must pass each preset's own profile and
# fail the other's.
#   profile_shape_test.sh PATH/TO/gpuscope PATH/TO/workload_profile_shape.py WORKDIR
set -u
gpuscope=$1
helper=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
failures=0

for p in seed tuned; do
  python3 "$(dirname "$0")/fake_workload_trace.py" "$p" "$work/$p.json" || { echo "FAIL: fake trace"; exit 1; }
done

# expect STATUS FORM PRESET FILE
expect() {
  local want=$1
  shift
  local out rc
  out=$(python3 "$helper" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: workload_profile_shape.py $* -> exit $rc (want $want): $out"
    failures=$((failures + 1))
  else
    echo "ok: $* -> exit $rc: $out"
  fi
}

for p in seed tuned; do
  "$gpuscope" report --json -o "$work/$p-report.json" "$work/$p.json" || { echo "FAIL: gpuscope report $p"; failures=$((failures + 1)); }
  "$gpuscope" import -q -o "$work/$p.gscope" "$work/$p.json" &&
    "$gpuscope" export --format chrome -o "$work/$p-export.json" "$work/$p.gscope" ||
    { echo "FAIL: import/export $p"; failures=$((failures + 1)); }
done
for form in report export; do
  f=$([ "$form" = report ] && echo report || echo chrome)
  expect 0 "$f" seed "$work/seed-$form.json"
  expect 1 "$f" tuned "$work/seed-$form.json"
  expect 0 "$f" tuned "$work/tuned-$form.json"
  expect 1 "$f" seed "$work/tuned-$form.json"
done
# The report line names the shares: seed's padding + broadcast is 40%.
python3 "$helper" report seed "$work/seed-report.json" | grep -q "padding+broadcast 40.0% .*concurrency 0.000 -> OK$" ||
  { echo "FAIL: seed report line: $(python3 "$helper" report seed "$work/seed-report.json")"; failures=$((failures + 1)); }
# The op table: the seed-shaped trace opens every layer range and launches
# inside them; the tuned-shaped one (a graph replay) has none.
expect 0 ops seed "$work/seed-report.json"
expect 1 ops seed "$work/tuned-report.json"
python3 "$helper" ops seed "$work/seed-report.json" | grep -q "101 of 101 layer ranges are op rows, (no op) 0.0% of GPU time" ||
  { echo "FAIL: seed ops line: $(python3 "$helper" ops seed "$work/seed-report.json")"; failures=$((failures + 1)); }
echo '{"schema": "something/else"}' > "$work/other.json"
expect 2 report seed "$work/other.json"
expect 2 report seed "$work/missing.json"
expect 2 chrome seed "$work/other.json"
expect 2 report fastest "$work/seed-report.json"
expect 2 ops seed "$work/other.json"

rm -rf "$work"
echo "profile_shape_test: $failures failure(s)"
[ "$failures" -eq 0 ]
