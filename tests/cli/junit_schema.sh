#!/usr/bin/env bash
# Every JUnit file `gpuscope check --junit` writes is valid against the JUnit
# schema CI systems read (tests/data/junit/junit.xsd): a pass, a failure, a
# skip on purpose, a check that could not run (exit 2), and a gate that
# stopped before checking (bad input, runs of different workloads).
#   junit_schema.sh GPUSCOPE XSD WORKDIR
set -uo pipefail
gs=$(realpath "${1:?usage: junit_schema.sh GPUSCOPE XSD WORKDIR}")
xsd=$(realpath "${2:?}")
work=${3:?}
command -v xmllint >/dev/null || { echo "xmllint not found (Debian: libxml2-utils; scripts/setup.sh installs it)"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$gs" synth --kernels 6000 --gpus 2 -o base.gscope 2>/dev/null || { echo "synth failed"; exit 1; }
"$gs" synth --kernels 6000 --gpus 2 --bn-slowdown 1.6 -o slow.gscope 2>/dev/null
"$gs" synth --kernels 6000 --gpus 2 --padding-share 0.3 --preset report -o odd.gscope 2>/dev/null
printf '%s' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k<&>\"", "pid": 0, "tid": 7, "ts": 1, "dur": 5, "args": {"device": 0, "stream": 7}}]}' >one.json

valid() {  # NAME EXPECTED-EXIT CHECK-ARGS...
  local name=$1 want=$2
  shift 2
  "$gs" check "$@" --junit "$name.xml" >/dev/null 2>"$name.err"
  local rc=$?
  [ $rc -eq "$want" ] || bad "$name: exit $rc, want $want ($(cat "$name.err"))"
  [ -s "$name.xml" ] || { bad "$name: no JUnit file"; return; }
  xmllint --noout --schema "$xsd" "$name.xml" 2>"$name.lint" || bad "$name: not valid: $(cat "$name.lint")"
}
valid pass 0 base.gscope base.gscope
valid fail 1 base.gscope slow.gscope --allow-different-runs --noise off --max-share-increase padding=1 --fail-on new-finding
valid skip 0 one.json one.json --allow-skip
valid not-run 2 one.json one.json --max-share-increase padding=1
valid bad-input 2 base.gscope missing.gscope
valid other-run 2 base.gscope odd.gscope
valid no-device 2 base.gscope base.gscope --device 7
grep -q "<error " not-run.xml || bad "not-run: no <error> element"
grep -q "<skipped " skip.xml || bad "skip: no <skipped> element"

# The schema is not a formality: a file with a testcase out of place fails it.
sed 's/<properties>/<testcase name="early"\/><properties>/' pass.xml >broken.xml
xmllint --noout --schema "$xsd" broken.xml 2>/dev/null && bad "the schema accepts a testcase before <properties>"

if ((failures)); then echo "junit_schema: $failures failure(s)"; exit 1; fi
echo "junit_schema: every JUnit file is valid"
