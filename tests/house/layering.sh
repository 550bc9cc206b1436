#!/usr/bin/env bash
# The one-way arrows of docs/architecture.md, checked: every `#include "dir/…"`
# in src/<module>/ and viewer/ must name a module that <module> may include,
# and a module's detail/ folder is included only by that module and its tests.
#   layering.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: layering.sh SOURCE_DIR}
cd "$root"

declare -A allowed=(
  [trace]="trace"
  [store]="trace store"
  [import]="trace store import"
  [capture]="trace store capture gpuscope"
  [analysis]="trace analysis"
  [export]="trace analysis export"
  [job]="trace store import analysis export job"
  [python]="trace store import analysis export job python gpuscope"
  [cli]="trace store import capture analysis export job cli gpuscope"
  [viewer]="trace import analysis export job viewer"
)

failures=0
check_dir() {  # MODULE DIR
  local module=$1 dir=$2 file line target
  [ -d "$dir" ] || return 0
  while IFS=: read -r file line target; do
    if [[ " ${allowed[$module]} " != *" $target "* ]]; then
      echo "FAIL: $file:$line: $module/ includes $target/ (allowed: ${allowed[$module]})"
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
