#!/usr/bin/env bash
# Rewrites tests/cost/costs.txt, the cost guard's committed figures, from this
# checkout (DEVELOPERS.md, "The cost guard"): builds gpuscope_cost, runs each
# workload under callgrind (JOBS at a time) and writes every workload's
# instructions and peak heap bytes. Commit the file with the change that
# moved the figures, saying why.
#
#   bash scripts/update_costs.sh [BUILD_DIR]    (default: build, configured as Release)
# Environment: JOBS (default: cores), RUNS (default 1; more runs each workload
# that many times and fails if any figure differs between runs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-1}
costs=tests/cost/costs.txt

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target gpuscope_cost
driver="$build/tests/gpuscope_cost"
[ -x "$driver" ] || { echo "update_costs: $driver not built (a Release build with valgrind installed is needed)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-costs.XXXXXX")
trap 'rm -rf "$work" "$costs.tmp.$$"' EXIT
for run in $(seq "$RUNS"); do
  "$driver" --list | xargs -P "$JOBS" -I{} sh -c \
    "bash tests/cost/check_cost.sh --measure '$driver' {} > '$work/{}.$run' || { s=\$?; [ \$s -eq 77 ] && echo '{} -' > '$work/{}.$run' || exit 255; }"
done

{
  echo "# The cost guard's committed figures (DEVELOPERS.md, \"The cost guard\"): per workload of"
  echo "# tests/cost/cost_driver.cpp, its instructions (callgrind) and peak heap bytes. A test fails"
  echo "# when a figure grows by more than 5 %. Written by scripts/update_costs.sh."
  echo "# build: $("$driver" --build)"
  echo "# workload instructions peak_heap_bytes"
  for workload in $("$driver" --list); do
    first=$(cat "$work/$workload.1")
    for run in $(seq 2 "$RUNS"); do
      if [ "$(cat "$work/$workload.$run")" != "$first" ]; then
        echo "update_costs: $workload is not deterministic: $(cat "$work/$workload".*)" >&2
        exit 1
      fi
    done
    case $first in
      *" -") echo "update_costs: $workload is not in this build; its committed line is kept" >&2
             grep "^$workload " "$costs" || { echo "update_costs: and $costs has none" >&2; exit 1; } ;;
      *) echo "$first" ;;
    esac
  done
} >"$costs.tmp.$$"
mv "$costs.tmp.$$" "$costs"
cat "$costs"
