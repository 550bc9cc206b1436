#!/usr/bin/env bash
# The one-way arrows of docs/architecture.md, checked: every `#include "dir/…"`
# in src/<module>/ and viewer/ must name a module that <module> may include,
# and a module's detail/ folder is included only by that module and its tests.
# words/ (how gpuscope speaks to people) stands on trace/'s plain types alone;
# trace/ and store/ hand out data and never use it, and of analysis/ only the
# files that still write sentences into the Profile may.
#   layering.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: layering.sh SOURCE_DIR}
cd "$root"

declare -A allowed=(
  [trace]="trace"
  [words]="trace words"
  [store]="trace store"
  [import]="trace store import"
  [capture]="trace store capture gpuscope"
  [analysis]="trace analysis words"
  [export]="trace analysis export words"
  [job]="trace store import analysis export job"
  [python]="trace words store import analysis export job python gpuscope"
  [cli]="trace words store import capture analysis export job cli gpuscope"
  [viewer]="trace words import analysis export job viewer"
)

# Of analysis/, the findings write their sentences with words/; these files
# still write sentences into the Profile as well (workload and step evidence,
# saving notes, the job's clock note, check and diff messages). No other
# file of analysis/ speaks.
analysis_words=(
  src/analysis/findings/
  src/analysis/check.cpp
  src/analysis/diff.cpp
  src/analysis/graph/savings.cpp
  src/analysis/job/job.cpp
  src/analysis/passes/steps.cpp
  src/analysis/passes/workload.cpp
)
# Of trace/, words/ reads the plain types and the damage data only.
words_trace_headers="trace/types.h trace/damage.h"

failures=0
speaks() {  # FILE: whether a file of analysis/ may use words/
  local allowed_path
  for allowed_path in "${analysis_words[@]}"; do
    [[ "$1" == "$allowed_path"* ]] && return 0
  done
  return 1
}
check_dir() {  # MODULE DIR
  local module=$1 dir=$2 file line target
  [ -d "$dir" ] || return 0
  while IFS=: read -r file line target; do
    if [[ " ${allowed[$module]} " != *" $target "* ]]; then
      echo "FAIL: $file:$line: $module/ includes $target/ (allowed: ${allowed[$module]})"
      failures=$((failures + 1))
    elif [ "$module" = analysis ] && [ "$target" = words ] && ! speaks "$file"; then
      echo "FAIL: $file:$line: analysis/ includes words/ outside the files that write sentences (${analysis_words[*]})"
      failures=$((failures + 1))
    fi
  done < <(grep -rnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' "$dir" \
             --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' |
           sed -E 's/^([^:]+):([0-9]+):.*"([a-z_]+)\/$/\1:\2:\3/')
}

for module in "${!allowed[@]}"; do
  [ "$module" = viewer ] && continue
  [ -d "src/$module" ] || { [ "$module" = python ] && continue; echo "FAIL: src/$module is missing"; failures=$((failures + 1)); continue; }
  check_dir "$module" "src/$module"
done
check_dir viewer viewer
while IFS=: read -r file line header; do
  if [[ " $words_trace_headers " != *" $header "* ]]; then
    echo "FAIL: $file:$line: words/ includes $header (of trace/ only: $words_trace_headers)"
    failures=$((failures + 1))
  fi
done < <(grep -rnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"trace/[^"]+"' src/words \
           --include='*.h' --include='*.cpp' | sed -E 's/^([^:]+):([0-9]+):.*"(trace\/[^"]+)"$/\1:\2:\3/')
for dir in src/*/; do
  m=$(basename "$dir")
  [ -n "${allowed[$m]+x}" ] || { echo "FAIL: src/$m has no row in the layering table (tests/house/layering.sh, docs/architecture.md)"; failures=$((failures + 1)); }
done

# A module's detail/ is private: what another module needs is in a public
# header. Only the module's own files and its own tests include it. A test's
# module: tests/<module>/…; tests/bench/<module>_bench.cpp; a fuzz target
# tests/fuzz/fuzz_<name>.cpp, the first gpuscope_<module> library it links
# (GPUSCOPE_FUZZ_LIBS_fuzz_<name> in tests/fuzz/CMakeLists.txt).
owner_of() {  # FILE -> the module whose tests or sources it is ('' if none)
  local file=$1 stem libs
  case "$file" in
    src/*) file=${file#src/}; echo "${file%%/*}" ;;
    viewer/*) echo viewer ;;
    tests/bench/*_bench.cpp) stem=${file##*/}; echo "${stem%_bench.cpp}" ;;
    tests/bench/*) echo "" ;;
    tests/fuzz/fuzz_*.cpp)
      stem=${file##*/}; stem=${stem%.cpp}
      libs=$(sed -nE "s/^set\(GPUSCOPE_FUZZ_LIBS_${stem} +gpuscope_([a-z_]+).*/\1/p" tests/fuzz/CMakeLists.txt)
      echo "${libs%%$'\n'*}" ;;
    tests/*) file=${file#tests/}; echo "${file%%/*}" ;;
  esac
}
while IFS=: read -r file line target; do
  owner=$(owner_of "$file")
  if [ "$owner" != "$target" ]; then
    echo "FAIL: $file:$line: includes $target/detail/ (private to src/$target/ and its tests)"
    failures=$((failures + 1))
  fi
done < <(grep -rnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/detail/' src viewer tests \
           --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' |
         sed -E 's/^([^:]+):([0-9]+):.*"([a-z_]+)\/detail\/$/\1:\2:\3/')

if ((failures)); then echo "layering: $failures include(s) against the arrows"; exit 1; fi
echo "layering: every include follows the arrows"
