#!/usr/bin/env bash
# `mpirun -n P gpuscope report` at scale (docs/scale.md, docs/PERFORMANCE.md):
# writes a synthetic job of RANKS x KERNELS with `gpuscope synth --ranks`,
# then times `gpuscope report --json -j J` as one process and under
# `mpirun -n P` for each P given, printing the wall time of the whole run and
# each process's CPU time and peak RSS (GNU time), and checking that every run
# wrote the one process's bytes. The report goes to a file (-o), as on a
# cluster: mpirun forwards process 0's standard output through a terminal of
# its own, which costs more than the report for a document of 300 MB.
#
#   bash tests/bench/mpi_report.sh build/bin/gpuscope [RANKS] [KERNELS] [J] [P...]
set -euo pipefail
gpuscope=$(realpath "${1:?usage: mpi_report.sh GPUSCOPE [RANKS] [KERNELS] [J] [P...]}")
ranks=${2:-64}
kernels=${3:-20000}
j=${4:-1}
shift $(($# < 4 ? $# : 4))
procs=("$@")
[ ${#procs[@]} -gt 0 ] || procs=(2)
extra=${GPUSCOPE_BENCH_ARGS:-}  # e.g. --no-simulation
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-mpi-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$gpuscope" synth --ranks "$ranks" --kernels "$kernels" --slow-rank $((ranks / 3)) --slowdown 1.2 --seed 7 \
  -o "$work/job" >/dev/null
echo "job: ${ranks} ranks x ${kernels} kernels ($(du -sh "$work/job" | cut -f1)), report --json -j $j $extra"

now() { date +%s.%N; }
start=$(now)
/usr/bin/time -f "%U %S %M" -o "$work/time.one" "$gpuscope" report --json -j "$j" $extra "$work/job" -o "$work/one.json"
one=$(echo "$(now) - $start" | bc)
read -r user sys rss_kb <"$work/time.one"
echo "one process: ${one} s wall; cpu ${user}+${sys} s, peak RSS $((rss_kb / 1024)) MiB"

for p in "${procs[@]}"; do
  rm -f "$work"/time.p.*
  start=$(now)
  mpirun --oversubscribe --allow-run-as-root -n "$p" sh -c \
    'exec /usr/bin/time -f "%U %S %M" -o "$0/time.p.${OMPI_COMM_WORLD_RANK}" "$@"' "$work" \
    "$gpuscope" report --json -j "$j" $extra "$work/job" -o "$work/p.json"
  wall=$(echo "$(now) - $start" | bc)
  line="mpirun -n $p: ${wall} s wall ($(echo "scale=2; $one / $wall" | bc)x one process);"
  for ((r = 0; r < p; ++r)); do
    read -r user sys rss_kb <"$work/time.p.$r"
    line+=" process $r cpu ${user}+${sys} s, peak RSS $((rss_kb / 1024)) MiB;"
  done
  echo "$line"
  cmp -s "$work/one.json" "$work/p.json" || { echo "FAIL: mpirun -n $p printed other bytes than one process" >&2; exit 1; }
done
echo "every run printed the same bytes"
