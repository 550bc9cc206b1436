#!/usr/bin/env bash
# The cost guard (DEVELOPERS.md, "The cost guard"): one workload of
# gpuscope_cost under callgrind, its instructions and peak heap bytes against
# the figures committed in costs.txt.
#
#   check_cost.sh DRIVER COSTS WORKLOAD   fails (exit 1) when a figure is more than 5 % above the
#                                         committed one; skips (exit 77) when costs.txt is another
#                                         build's (compiler, build type, flags) or the workload is
#                                         not in this build
#   check_cost.sh --measure DRIVER WORKLOAD   prints "WORKLOAD INSTRUCTIONS PEAK_HEAP_BYTES"
#   check_cost.sh --listed DRIVER COSTS       fails unless costs.txt lists exactly the driver's workloads
set -euo pipefail

limit_percent=5

# measure DRIVER WORKLOAD: sets `instructions` and `heap`; exits with the
# driver's status when it fails (77: not in this build).
measure() {
  local driver=$1 workload=$2 work status=0
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-cost-check.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  valgrind --tool=callgrind --fair-sched=yes --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
    "$driver" "$workload" >"$work/stdout" 2>"$work/stderr" || status=$?
  if [ "$status" -ne 0 ]; then
    grep -v '^==[0-9]*==' "$work/stderr" >&2 || true
    [ "$status" -eq 77 ] || echo "FAIL: $driver $workload exited with status $status" >&2
    exit "$status"
  fi
  instructions=$(awk '$1 == "totals:" { print $2 }' "$work/callgrind.out")
  heap=$(awk '$1 == "peak_heap_bytes" { print $2 }' "$work/stdout")
  if [ -z "$instructions" ] || [ -z "$heap" ]; then
    echo "FAIL: no instruction count or peak heap bytes from $driver $workload" >&2
    cat "$work/stderr" "$work/stdout" >&2
    exit 1
  fi
}

# compare WHAT MEASURED COMMITTED: one line; returns 1 when MEASURED is over the limit.
compare() {
  awk -v what="$1" -v m="$2" -v c="$3" -v limit="$limit_percent" 'BEGIN {
    change = c > 0 ? 100 * (m - c) / c : (m > 0 ? 100 : 0)
    verdict = change > limit ? "FAIL: more than " limit " % above the committed figure" \
            : change < -limit ? "ok (lower by more than " limit " %: scripts/update_costs.sh keeps the gain)" : "ok"
    printf "  %-13s %15d  committed %15d  %+6.2f %%  %s\n", what, m, c, change, verdict
    exit (change > limit ? 1 : 0)
  }'
}

if [ "${1:-}" = "--measure" ]; then
  measure "$2" "$3"
  echo "$3 $instructions $heap"
  exit 0
fi

if [ "${1:-}" = "--listed" ]; then
  driver=$2 costs=$3
  if ! diff <("$driver" --list | sort) <(awk '/^[a-z]/ { print $1 }' "$costs" | sort); then
    echo "FAIL: $costs does not list exactly the workloads of gpuscope_cost (<: only in the driver, >: only in the file);"
    echo "      bash scripts/update_costs.sh rewrites it"
    exit 1
  fi
  echo "cost.listed: $costs lists every workload"
  exit 0
fi

driver=${1:?usage: check_cost.sh DRIVER COSTS WORKLOAD} costs=${2:?} workload=${3:?}
build=$("$driver" --build)
committed_build=$(sed -n 's/^# build: //p' "$costs")
if [ "$build" != "$committed_build" ]; then
  echo "skipped: $costs holds the figures of another build ($committed_build), this is $build"
  exit 77
fi
read -r committed_instructions committed_heap < <(awk -v w="$workload" '$1 == w { print $2, $3 }' "$costs")
measure "$driver" "$workload"
echo "cost of $workload (callgrind; limit +$limit_percent %):"
status=0
compare instructions "$instructions" "$committed_instructions" || status=1
compare peak_heap_B "$heap" "$committed_heap" || status=1
if [ "$status" -ne 0 ]; then
  echo "An increase that is meant: bash scripts/update_costs.sh, and commit tests/cost/costs.txt with the change,"
  echo "saying why in the commit message (DEVELOPERS.md, \"The cost guard\")."
fi
exit "$status"
