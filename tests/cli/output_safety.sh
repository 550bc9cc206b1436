#!/usr/bin/env bash
# No command destroys a trace or leaves a temporary file behind:
#  1. every command that writes a file refuses (exit 2, input untouched) when
#     its output is one of its inputs — by the same name, by another path to
#     it, and through a symbolic link;
#  2. SIGTERM, SIGHUP, SIGINT and SIGPIPE during a large export (SQLite: a
#     named temporary; .json.gz: an unnamed one) and a large import end the
#     command with the signal's status (or it finished first) and leave no
#     temporary; after a SIGKILL the next export to that name removes it;
#  3. a FIFO as input is read as a stream, and one nobody writes to is an
#     error, not a hang; "-" is standard input, a pipe or a process
#     substitution works as any input;
#  4. an output that is no regular file is written through, never replaced:
#     a FIFO, /dev/null, a symbolic link (its target is replaced, the link
#     stays); "-" is standard output; status lines go to standard error.
#   output_safety.sh GPUSCOPE WORKDIR [GPUSCOPE_VIEW]
set -uo pipefail
gs=${1:?usage: output_safety.sh GPUSCOPE WORKDIR [GPUSCOPE_VIEW]}
work=${2:?}
view=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$gs" synth --kernels 20000 -o t.gscope >/dev/null || { echo "synth failed"; exit 1; }
"$gs" synth --kernels 20000 --preset report -o u.gscope >/dev/null
"$gs" synth --kernels 20000 -o t.json >/dev/null
mkdir -p sub && ln -sf "$PWD/t.gscope" link.gscope && ln -sf "$PWD/t.json" link.json
sum() { md5sum "$1" | cut -d' ' -f1; }
before_t=$(sum t.gscope) before_j=$(sum t.json)

refused() {  # DESCRIPTION COMMAND...
  local what=$1
  shift
  out=$("$gs" "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "$what: exit $rc, want 2 ($out)"
  case $out in *"refusing to overwrite"*) ;; *) bad "$what: no clear message: $out" ;; esac
}
for o in t.gscope ./sub/../t.gscope "$PWD/t.gscope" link.gscope; do
  refused "report -o $o" report t.gscope -o "$o"
  refused "report --json -o $o" report --json t.gscope u.gscope -o "$o"
  refused "export chrome -o $o" export t.gscope -o "$o" --format chrome
  refused "export sqlite -o $o" export t.gscope -o "$o" --format sqlite
  refused "diff -o $o (before)" diff t.gscope u.gscope -o "$o"
  refused "diff -o $o (after)" diff u.gscope t.gscope -o "$o"
done
if [ -n "$view" ]; then  # refused before any window opens: no display needed
  for o in t.gscope link.gscope; do
    out=$("$view" t.gscope --screenshot "$o" 2>&1)
    rc=$?
    [ $rc -eq 2 ] || bad "gpuscope-view --screenshot $o: exit $rc, want 2 ($out)"
    case $out in *"refusing to overwrite"*) ;; *) bad "gpuscope-view --screenshot $o: unclear: $out" ;; esac
  done
fi
for o in t.json ./sub/../t.json link.json; do
  refused "import -o $o" import t.json -o "$o"
done
[ "$(sum t.gscope)" = "$before_t" ] || bad "t.gscope changed"
[ "$(sum t.json)" = "$before_j" ] || bad "t.json changed"

# ---- signals -------------------------------------------------------------------------------
"$gs" synth --kernels 1500000 -o big.gscope >/dev/null
"$gs" synth --kernels 300000 -o big.json.gz >/dev/null
leftovers() { ls -a | grep -E '\.tmp\.[0-9]+$'; }
for sig in TERM HUP INT PIPE; do
  for job in "export big.gscope -o x.sqlite" "export big.gscope -o x.json.gz" "import big.json.gz -o x.gscope"; do
    # shellcheck disable=SC2086
    "$gs" $job >/dev/null 2>&1 &
    pid=$!
    sleep 0.4
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    want=$((128 + $(kill -l "$sig")))
    [ $rc -eq $want ] || [ $rc -eq 0 ] || bad "$job, SIG$sig: exit $rc, want $want (or 0 when it finished first)"
    left=$(leftovers)
    [ -z "$left" ] || bad "$job, SIG$sig left: $left"
    rm -f x.sqlite x.json.gz x.gscope
  done
done
"$gs" export big.gscope -o x.sqlite >/dev/null 2>&1 &
pid=$!
sleep 0.4
kill -KILL "$pid" 2>/dev/null
wait "$pid"
"$gs" export t.gscope -o x.sqlite >/dev/null || bad "export after a SIGKILL failed"
left=$(leftovers)
[ -z "$left" ] || bad "the export after a SIGKILL did not remove: $left"

# ---- pipes ---------------------------------------------------------------------------------
"$gs" info <(cat t.gscope) >info.txt 2>&1 || bad "info <(cat t.gscope): $(cat info.txt)"
grep -q "synthetic" info.txt || bad "info of a process substitution does not describe the trace"
"$gs" report <(gzip -c t.json) >/dev/null 2>&1 || bad "report <(gzip -c t.json) failed"
mkfifo silent
out=$(timeout 60 "$gs" info silent 2>&1)
rc=$?
[ $rc -eq 2 ] || bad "info on a FIFO nobody writes to: exit $rc, want 2 ($out)"
case $out in *silent*"nothing arrived"*) ;; *) bad "info on a silent FIFO: unclear message: $out" ;; esac

"$gs" import - -o stdin.gscope <t.json 2>/dev/null || bad "import - < t.json failed"
cat t.json | "$gs" import - -o piped.gscope 2>/dev/null || bad "cat t.json | import - failed"
"$gs" info piped.gscope | grep -q synthetic || bad "the piped import does not hold the trace"
"$gs" diff t.gscope <(cat u.gscope) >/dev/null 2>&1 || bad "diff t.gscope <(cat u.gscope) failed"
"$gs" diff t.gscope - <u.gscope >/dev/null 2>&1 || bad "diff t.gscope - < u.gscope failed"
"$gs" export t.gscope -o t.sqlite 2>/dev/null
"$gs" info - <t.sqlite >sqlite-info.txt 2>&1 || bad "info - < t.sqlite failed: $(head -c 300 sqlite-info.txt)"
"$gs" stats <(cat t.sqlite) --report kernels >/dev/null 2>&1 || bad "stats <(cat t.sqlite) failed"
"$gs" report --json t.gscope -o base.json 2>/dev/null
"$gs" diff <(cat base.json) u.gscope >/dev/null 2>&1 || bad "diff <(saved report) u.gscope failed"

# ---- outputs that are no regular file ----------------------------------------------------------
"$gs" report t.gscope -o - >dash.txt 2>dash.err || bad "report -o - failed"
grep -q "^Findings\|GPUs" dash.txt || bad "report -o - wrote nothing to standard output"
[ ! -e ./- ] || bad "report -o - made a file named -"
"$gs" export t.gscope -o - --format chrome >dash.json 2>/dev/null || bad "export -o - --format chrome failed"
[ "$(head -c 1 dash.json)" = "{" ] || bad "export -o - --format chrome wrote no JSON to standard output"
"$gs" import t.json -o - 2>/dev/null | "$gs" info - >/dev/null 2>&1 || bad "import -o - | info - failed"
for cmd in "synth --kernels 100 -o quiet.gscope" "export t.gscope -o q.json" "import t.json -o q.gscope"; do
  # shellcheck disable=SC2086
  out=$("$gs" $cmd 2>/dev/null)
  [ -z "$out" ] || bad "$cmd printed on standard output: $out"
done
out=$("$gs" capture -o - -- true 2>&1)
[ $? -eq 2 ] || bad "capture -o - was not refused: $out"
case $out in *"capture writes a file per process"*) ;; *) bad "capture -o -: unclear message: $out" ;; esac
null_before=$(stat -c '%F %i' /dev/null)
"$gs" report t.gscope -o /dev/null || bad "report -o /dev/null failed"
"$gs" export t.gscope -o /dev/null --format sqlite 2>/dev/null || bad "export -o /dev/null --format sqlite failed"
"$gs" check t.gscope t.gscope --junit /dev/null >/dev/null || bad "check --junit /dev/null failed"
[ "$(stat -c '%F %i' /dev/null)" = "$null_before" ] || bad "/dev/null was replaced"
mkfifo out.fifo
for job in "report t.gscope -o out.fifo" "export t.gscope -o out.fifo --format sqlite" \
  "check t.gscope t.gscope --junit out.fifo"; do
  cat out.fifo >fifo.txt &
  reader=$!
  # shellcheck disable=SC2086
  timeout 60 "$gs" $job >/dev/null 2>&1 || bad "$job failed"
  wait "$reader"
  [ -p out.fifo ] || { bad "$job replaced the FIFO"; rm -f out.fifo; mkfifo out.fifo; }
  [ -s fifo.txt ] || bad "$job wrote nothing through the FIFO"
done
echo old >real.txt
ln -sf real.txt out.link
"$gs" report t.gscope -o out.link || bad "report -o out.link failed"
[ -L out.link ] || bad "report -o out.link replaced the symbolic link"
grep -q "GPUs" real.txt || bad "report -o out.link did not write the file it names"
left=$(leftovers)
[ -z "$left" ] || bad "writing through left: $left"

# ---- colour: severities coloured on a terminal only, never with NO_COLOR ---------------------------
esc=$(printf '\033[')
"$gs" report u.gscope >plain.txt
grep -qF "$esc" plain.txt && bad "report into a file carries colour codes"
script -qec "$gs report u.gscope" /dev/null >tty.txt </dev/null
grep -qF "${esc}1;31m[critical]" tty.txt || bad "report on a terminal does not colour [critical]"
NO_COLOR=1 script -qec "$gs report u.gscope" /dev/null >tty.txt </dev/null
grep -qF "$esc" tty.txt && bad "report on a terminal with NO_COLOR carries colour codes"

if ((failures)); then echo "output_safety: $failures failure(s)"; exit 1; fi
echo "output_safety: all checks passed"
