#!/usr/bin/env bash
# Job analysis at scale (docs/scale.md, docs/PERFORMANCE.md): writes a
# synthetic job of RANKS x KERNELS (default 1,024 x 20,000) with
# `gpuscope synth --ranks`, then times `gpuscope report` (text) and
# `gpuscope report --json` on it with each -j given, printing wall time and
# peak RSS (GNU time) per run and checking that every run of a kind printed
# the same bytes.
#
#   bash tests/bench/job_report.sh build/bin/gpuscope [RANKS] [KERNELS] [JOBS...]
set -euo pipefail
gpuscope=${1:?usage: job_report.sh GPUSCOPE [RANKS] [KERNELS] [JOBS...]}
ranks=${2:-1024}
kernels=${3:-20000}
shift $(( $# < 3 ? $# : 3 ))
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(1 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-job-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$(date +%s.%N)
"$gpuscope" synth --ranks "$ranks" --kernels "$kernels" --slow-rank $((ranks / 3)) --slowdown 1.2 --seed 7 \
  -o "$work/job" >/dev/null
echo "synth: ${ranks} ranks x ${kernels} kernels in $(echo "$(date +%s.%N) - $start" | bc) s ($(du -sh "$work/job" | cut -f1))"

first_text=""
for j in "${jobs[@]}"; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$gpuscope" report -j "$j" "$work/job" >"$work/out-$j.txt"
  read -r wall rss_kb <"$work/time"
  echo "report (text) -j $j: ${wall} s, peak RSS $((rss_kb / 1024)) MiB"
  if [ -z "$first_text" ]; then first_text="$work/out-$j.txt"; elif ! cmp -s "$first_text" "$work/out-$j.txt"; then
    echo "FAIL: -j $j printed another text report than the first run" >&2
    exit 1
  fi
done
first=""
for j in "${jobs[@]}"; do
  for sim in "" "--no-simulation"; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$gpuscope" report --json -j "$j" $sim "$work/job" >"$work/out-$j$sim.json"
    read -r wall rss_kb <"$work/time"
    echo "report --json -j $j ${sim:-(with simulation)}: ${wall} s, peak RSS $((rss_kb / 1024)) MiB"
    if [ -z "$sim" ]; then
      if [ -z "$first" ]; then first="$work/out-$j.json"; elif ! cmp -s "$first" "$work/out-$j.json"; then
        echo "FAIL: -j $j printed other bytes than the first run" >&2
        exit 1
      fi
    fi
  done
done
python3 - "$first" "$((ranks / 3))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
top = r["stragglers"][0]["rank"]
print(f"stragglers[0].rank = {top} (planted {sys.argv[2]}); {len(r['collectives'])} collectives matched")
sys.exit(0 if top == int(sys.argv[2]) else 1)
PY
