#!/usr/bin/env bash
# `mpirun -n P gpuscope report DIR` prints what one process prints, byte for
# byte (docs/scale.md):
#  1. a synthetic job with a slow rank and clocks off by seconds: the JSON and
#     the text report of P = 1, 2 and 4 processes are the one process's, with
#     and without the simulation pass (which every process runs on its share
#     of the traces: the job has a finding whose fix is simulated), and so is
#     `diff` of two jobs;
#  2. a job with a corrupt file and a rank given twice: the same report (the
#     files named the same, in the same place) and the same exit status with
#     P = 2 as with one process, and a job whose every file is corrupt fails
#     with the same one line and exit 2 on every process count;
#  3. nothing on standard output or error but process 0's.
#   mpi_report.sh GPUSCOPE MPIEXEC WORKDIR
set -uo pipefail
gs=${1:?usage: mpi_report.sh GPUSCOPE MPIEXEC WORKDIR}
mpiexec=${2:?}
work=${3:?}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Root runs the tests here; --oversubscribe: more processes than cores.
mpi() {
  local n=$1
  shift
  "$mpiexec" --oversubscribe --allow-run-as-root -n "$n" "$gs" "$@"
}
same() {  # WHAT FILE_A FILE_B
  cmp -s "$2" "$3" || bad "$1: $2 and $3 differ: $(diff "$2" "$3" | head -5)"
}

"$gs" synth --ranks 8 --kernels 3000 --slow-rank 5 --clock-offset 2 -o job >/dev/null || { echo "synth failed"; exit 1; }
"$gs" synth --ranks 8 --kernels 3000 --slow-rank 2 --seed 7 -o other >/dev/null || { echo "synth failed"; exit 1; }

# 1. The same bytes, JSON and text, whatever the number of processes.
"$gs" report --json job >one.json 2>one.err || bad "one process: exit $?"
"$gs" report job >one.txt 2>/dev/null
"$gs" report --json --no-simulation job >one-nosim.json 2>/dev/null
grep -q '"straggler"' one.json || bad "one process: no straggler finding (the test's job is not what it should be)"
# A finding whose fix is simulated: every process replays its share of the traces.
grep -q '"saving_source": *"simulated"' one.json || bad "one process: no simulated saving (the test's job is not what it should be)"
for p in 1 2 4; do
  mpi $p report --json job >p$p.json 2>p$p.err || bad "P=$p: exit $?"
  same "report --json, P=$p" one.json p$p.json
  same "stderr, P=$p" one.err p$p.err
  mpi $p report job >p$p.txt 2>/dev/null
  same "report (text), P=$p" one.txt p$p.txt
done
mpi 2 report --json --no-simulation job >p2-nosim.json 2>/dev/null
same "report --json --no-simulation, P=2" one-nosim.json p2-nosim.json
mpi 2 report --json -j 1 job -o p2-out.json >p2-out.stdout 2>&1
same "report -o, P=2" one.json p2-out.json
[ -s p2-out.stdout ] && bad "report -o, P=2: printed $(head -c 200 p2-out.stdout)"
"$gs" diff --json job other >one-diff.json 2>/dev/null
mpi 2 diff --json job other >p2-diff.json 2>/dev/null
same "diff --json, P=2" one-diff.json p2-diff.json

# 2. A corrupt file and a rank given twice, named the same with P = 2 as with one process.
mkdir -p bad && cp job/*.gscope bad/
files=(bad/*.gscope)
head -c 3000 "${files[3]}" >"${files[3]}.cut" && mv "${files[3]}.cut" "${files[3]}"
printf 'not a trace at all' >bad/rank-zzzzz.json
cp "${files[1]}" bad/rank-copy.gscope
"$gs" report --json bad >bad-one.json 2>bad-one.err
rc1=$?
mpi 2 report --json bad >bad-p2.json 2>bad-p2.err
rc2=$?
[ $rc1 -eq $rc2 ] || bad "corrupt file: exit $rc1 with one process, $rc2 with P=2"
same "corrupt file, report --json, P=2" bad-one.json bad-p2.json
same "corrupt file, stderr, P=2" bad-one.err bad-p2.err
grep -q "$(basename "${files[3]}")" bad-one.json || bad "corrupt file: not named in the report"
grep -q "rank-zzzzz.json" bad-one.json || bad "file that is not a trace: not named in the report"
"$gs" report bad >bad-one.txt 2>/dev/null
mpi 2 report bad >bad-p2.txt 2>/dev/null
same "corrupt file, report (text), P=2" bad-one.txt bad-p2.txt

mkdir -p worse && printf 'garbage' >worse/a.json && printf 'more garbage' >worse/b.json && : >worse/c.gscope
"$gs" report worse >worse-one.out 2>worse-one.err
rc1=$?
for p in 2 3; do
  mpi $p report worse >worse-p$p.out 2>worse-p$p.err
  rc=$?
  [ $rc -eq 2 ] || bad "no readable file, P=$p: exit $rc, want 2"
  # mpirun adds its own lines about the failed job; gpuscope's are the one process's.
  grep '^gpuscope: ' worse-p$p.err >worse-p$p.ours
  same "no readable file, stderr, P=$p" worse-one.err worse-p$p.ours
  [ -s worse-p$p.out ] && bad "no readable file, P=$p: printed on stdout"
done
[ $rc1 -eq 2 ] || bad "no readable file, one process: exit $rc1, want 2"
[ "$(wc -l <worse-one.err)" -eq 1 ] || bad "no readable file: want one line, got $(cat worse-one.err)"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "mpirun reports: the same bytes as one process"
